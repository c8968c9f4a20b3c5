import Foundation
@testable import Repair
import SignalGenerator
import Testing

/// Property test of `hark repair` (the Repair library, in the process, so AddressSanitizer watches
/// every byte it reads): mutated FLAC, Ogg Opus and WAV files from `RepairFuzzMutator` (hark's own
/// and the reference writers', `RepairFuzzSeed`), each
/// checked and then repaired as `hark repair` and `hark repair --write [--keep]` do. For every file:
/// - nothing traps (a trap ends the test process, the case's seed and changes printed just before);
/// - a check changes no byte, and says one line;
/// - `--write` does what the check said: nothing for a sound file, the same refusal for a file it
///   cannot repair, a repair for one it would repair (one that failed its own decoding check left
///   the file as it was, and broke the check's word);
/// - a repaired file is sound when checked again, `--keep`'s original is the damaged file byte for
///   byte, and nothing else is left beside it (no temporary file).
///
/// A seeded run is part of the suite; `scripts/fuzz-repair` runs many more with a random seed by
/// setting `HARK_FUZZ_ITERATIONS` and `HARK_FUZZ_SEED`; `HARK_FUZZ_KEEP=N` keeps file N's damaged
/// bytes in the current directory, to try by hand.
@Suite struct RepairFuzzTests {
    static var iterations: Int {
        ProcessInfo.processInfo.environment["HARK_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 1_500 / sanitizerDivisor
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["HARK_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5245_5041_4952
    }

    /// Under AddressSanitizer the decoding checks run several times slower; a sanitized run takes a
    /// fifth of the files, still hundreds of repairs for the sanitizer to watch.
    static let sanitizerDivisor: Int = {
        let process = dlopen(nil, RTLD_NOW)
        return dlsym(process, "__asan_init") != nil || dlsym(process, "__tsan_init") != nil ? 5 : 1
    }()

    /// What the run came to, printed at its end (and by `scripts/fuzz-repair`).
    struct Tally: CustomStringConvertible {
        var sound = 0, repaired = 0, refused = 0

        var description: String { "\(sound) sound, \(repaired) repaired, \(refused) refused as not repairable" }
    }

    @Test func mutatedFilesAreRepairedOrRefusedAndNeverMadeWorse() throws {
        let reference = try RepairFuzzSeed.fromReferenceWriters()
        if !reference.missing.isEmpty {
            print("RepairFuzzTests: no seeds from \(reference.missing.joined(separator: ", ")) (not installed; scripts/install-deps installs them)")
        }
        let seeds = try RepairFuzzSeed.all() + reference.seeds
        // On a tmpfs where there is one: the repair's fsyncs then cost nothing, and the run takes
        // the time its CPU takes, not the disk's.
        let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : FileManager.default.temporaryDirectory.path
        let folder = "\(base)/hark-repair-fuzz-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        print("RepairFuzzTests: \(Self.iterations) files, HARK_FUZZ_SEED=\(Self.seed)")
        var mutator = RepairFuzzMutator(random: SplitMix64(seed: Self.seed))
        var tally = Tally()
        for iteration in 0..<Self.iterations {
            let seed = seeds[iteration % seeds.count]
            var bytes = seed.bytes
            let changes = mutator.mutate(&bytes, seed.container)
            let keep = mutator.random.next(below: 3) == 0
            let name = "file \(iteration) (\(seed.name): \(changes.joined(separator: "; ")))"
            // Printed before the repair runs, so a trap names the file that caused it.
            if ProcessInfo.processInfo.environment["HARK_FUZZ_VERBOSE"] != nil { print(name) }
            // A new file each time: a test beside this one that forks (to run a tool) holds a copy
            // of the repair's descriptor until its exec, and with it the repair's lock on the file
            // (`repair(_:write:keep:)` waits that out).
            let path = "\(folder)/case-\(iteration).\(seed.container)"
            try overwrite(path, with: bytes)
            if ProcessInfo.processInfo.environment["HARK_FUZZ_KEEP"] == String(iteration) {
                try overwrite("hark-fuzz-file-\(iteration).\(seed.container)", with: bytes)
                print("RepairFuzzTests: file \(iteration) kept as hark-fuzz-file-\(iteration).\(seed.container)")
            }
            check(path: path, damaged: bytes, keep: keep, name: name, tally: &tally)
            for leftover in try FileManager.default.contentsOfDirectory(atPath: folder) {
                try FileManager.default.removeItem(atPath: "\(folder)/\(leftover)")
            }
        }
        print("RepairFuzzTests: \(tally)")
        #expect(tally.repaired > Self.iterations / 10, "the mutations reach the repairs: \(tally)")
        #expect(tally.refused > 0 && tally.sound > 0, "and the refusals and whole files: \(tally)")
    }

    private func check(path: String, damaged: [UInt8], keep: Bool, name: String, tally: inout Tally) {
        let checked = repair(path, write: false, keep: false)
        #expect(contents(path) == damaged, "a check changed the file: \(name)")
        #expect(!checked.line.contains("\n"), "\(checked.line): \(name)")
        let written = repair(path, write: true, keep: keep)
        #expect(!written.line.contains("\n"), "\(written.line): \(name)")
        var expectedFiles: Set<String> = [path]
        switch (checked.result, written.result) {
        case (.sound, .sound):
            tally.sound += 1
            #expect(contents(path) == damaged, "\(name)")
            // "Nothing to do" holds only for a file that decodes cleanly, metadata included.
            if let container = checked.container {
                let problem = damaged.withUnsafeBytes { FileRepair.verify($0, as: container, shouldStop: { false }) }
                #expect(problem == nil, "called sound, but \(problem ?? ""): \(name)")
            }
        case (.failed(let first), .failed(let second)):
            tally.refused += 1
            #expect(first.message == second.message, "\(first.message) then \(second.message): \(name)")
            #expect(contents(path) == damaged, "a refused repair changed the file: \(name)")
        case (.wouldRepair, .failed):
            Issue.record("said repairable, then \(written.line): \(name)")
            #expect(contents(path) == damaged, "a failed repair changed the file: \(name)")
        case (.wouldRepair, .repaired(let backup)):
            tally.repaired += 1
            let again = repair(path, write: false, keep: false)
            if case .sound = again.result {} else { Issue.record("repaired, then \(again.line): \(name)") }
            if keep {
                if let original = backup {
                    #expect(contents(original) == damaged, "the kept original differs from the damaged file: \(name)")
                    expectedFiles.insert(original)
                } else {
                    Issue.record("--keep kept no original: \(name)")
                }
            } else {
                #expect(backup == nil, "\(name)")
            }
        default:
            Issue.record("the check said \(checked.line), --write \(written.line): \(name)")
        }
        let folder = (path as NSString).deletingLastPathComponent
        let present = Set(((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).map { "\(folder)/\($0)" })
        #expect(present == expectedFiles, "left beside the file: \(present.subtracting(expectedFiles)): \(name)")
    }

    /// `FileRepair.repair`, asked again while it finds the file locked. No recorder runs here: the
    /// lock is its own, from the call before, held on by a test beside this one that forked (to
    /// run a tool) and has not yet reached its exec, which closes the copy of the descriptor. The
    /// file is new to this run, so only such a copy can hold it, and for a moment.
    private func repair(_ path: String, write: Bool, keep: Bool) -> RepairOutcome {
        var outcome = FileRepair.repair(path, write: write, keep: keep)
        for _ in 0..<500 {
            guard case .failed(let failure) = outcome.result, failure.kind == .inUse else { break }
            usleep(10_000)
            outcome = FileRepair.repair(path, write: write, keep: keep)
        }
        return outcome
    }

    private func contents(_ path: String) -> [UInt8]? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { [UInt8]($0) }
    }
}

/// Replaces a file's contents with plain POSIX calls (Foundation's `Data.write` may sync).
private func overwrite(_ path: String, with bytes: [UInt8]) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
    defer { close(descriptor) }
    guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
        throw CocoaError(.fileWriteUnknown)
    }
}
