import ArgumentParser
import Recorder
import RecordPermission
import Repair
#if canImport(Glibc)
import Glibc
#endif

/// `hark repair FILE…`: finds what is wrong with recordings left unfinished (a killed recorder, a
/// power cut, a FLAC piped into a file) and, with --write, repairs them.
///
/// A dry run unless --write is given, as `git clean` without -f and `fsck -n`: the command names
/// archive files the user may have only one copy of, so the default only reads, and changing them
/// takes a word that says so.
struct RepairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Check FLAC, Ogg Opus and WAV files and repair what a killed recording left (--write).",
        discussion: """
            Without --write, says for each file what is wrong and what a repair would keep, and \
            changes nothing. With --write, a repair that leaves the audio where it is (what a \
            killed recording needs) is made in the file itself, needing no free space: the bytes \
            it changes are saved, the file checked by decoding it, and put back if it does not \
            check out. Any other repair, or with --keep (the original kept as NAME.orig), is \
            written beside the original, checked, and only then renamed over it. A file that is \
            already whole is never rewritten.

            FLAC: keeps every frame whose CRC checks, silences damaged ones (the timeline holds), \
            cuts a torn tail, sets total samples, frame sizes, MD5 and seek points. Ogg Opus: cuts \
            after the last whole packet, drops damaged pages and puts silence of their length in \
            their place (the timeline holds), ends the stream with the end-of-stream flag and its \
            granule position. WAV: sets the sizes, cuts a torn frame, makes a file past \
            4 GiB RF64.

            Exit codes: 0 nothing to do; 1 repaired; 2 damaged and repairable (dry run); 64 invalid \
            usage; 65 cannot repair (not FLAC, Ogg Opus or WAV, nothing to recover, or damage a repair would hide); \
            66 cannot open; 73 the file is read-only or the temporary file cannot be created; 74 I/O error while writing; 75 a \
            recording is still writing the file; 130 interrupted. With several files, the most \
            serious wins.
            """)

    @Flag(name: .long, help: "Repair the files (without it, only report).")
    var write = false

    @Flag(name: .long, help: "With --write, keep each original as NAME.orig.")
    var keep = false

    @Flag(name: .long, help: "Check the recordings the access log says never ended (killed, or a power cut), instead of FILEs.")
    var unfinished = false

    @Argument(help: "The files to check.", completion: .file())
    var files: [String] = []

    func validate() throws {
        if files.isEmpty && !unfinished { throw ValidationError("name the files to check, or give --unfinished") }
        if !files.isEmpty && unfinished { throw ValidationError("--unfinished checks the recordings the access log names; give no files with it") }
        if keep && !write { throw ValidationError("--keep applies with --write") }
    }

    func run() throws {
        if unfinished { return try runUnfinished() }
        let outcomes = repair(files)
        if write { closeUnfinishedRecordings(madeWhole: outcomes) }
        let code = Self.exitCode(outcomes)
        if code != 0 { throw ExitCode(code) }
    }

    /// Each unfinished recording's files, checked (or repaired); one repaired, or whose files are
    /// whole or gone, is logged as dealt with and not listed again.
    private func runUnfinished() throws {
        let log = AccessLog()
        let recordings = log.unfinishedRecordings()
        // A log that is not read cannot say that every recording ended (77, as `hark list`).
        let untrusted = log.untrustedParts()
        guard !recordings.isEmpty else {
            try failIfUntrusted(untrusted)
            Console.notice("no unfinished recordings: every recording the access log knows of ended")
            return
        }
        var all: [RepairOutcome] = []
        for (start, _) in recordings {
            // No file: stdout only, or killed before any file of it was named.
            let files = start.outputs.isEmpty ? "no file of it to repair" : start.outputs.joined(separator: ", ")
            Console.notice("unfinished recording started \(start.start.localText) from '\(start.device)': \(files)")
            let present = start.outputs.filter { somethingExists(at: $0) }
            for missing in start.outputs where !present.contains(missing) { Console.notice("\(missing): no longer there") }
            let outcomes = repair(present, ofAnUnfinishedRecording: true)
            all += outcomes
            if write && outcomes.allSatisfy(\.leavesFileWhole) { try? log.appendEvent(.repaired, recordingID: start.id) }
        }
        let code = Self.exitCode(all)
        // A part of the log not read may hold more unfinished recordings: said last, and with 77
        // (as hark list) when what was read needed nothing.
        if code != 0 {
            untrusted.forEach { Console.error("warning: " + $0) }
            throw ExitCode(code)
        }
        try failIfUntrusted(untrusted)
    }

    /// Files repaired by name are the natural way to mend a killed recording: an unfinished
    /// recording whose every file still there is among those this run left whole is logged as
    /// dealt with, as `--unfinished --write` logs it, so the next `hark record` does not ask for its
    /// repair again. A recording with a file this run did not name is left listed: that file may
    /// still need the repair.
    private func closeUnfinishedRecordings(madeWhole outcomes: [RepairOutcome]) {
        let whole = Set(outcomes.filter(\.leavesFileWhole).map { OutputPath.identity($0.path) })
        guard !whole.isEmpty else { return }
        let log = AccessLog()
        for (start, _) in log.unfinishedRecordings() {
            let present = start.outputs.filter { somethingExists(at: $0) }
            guard present.contains(where: { whole.contains(OutputPath.identity($0)) }) else { continue }
            // Its other files (a split's finished parts, a raw output) are checked without a word:
            // the user named the ones that needed the repair, and those that did not still count.
            let othersWhole = present.filter { !whole.contains(OutputPath.identity($0)) }.allSatisfy { path in
                let outcome = FileRepair.repair(path, write: false, keep: false, shouldStop: StopSignals.isStopPending)
                return outcome.leavesFileWhole || outcome.isRawSamples
            }
            if othersWhole { try? log.appendEvent(.repaired, recordingID: start.id) }
        }
    }

    private func repair(_ files: [String], ofAnUnfinishedRecording: Bool = false) -> [RepairOutcome] {
        var outcomes: [RepairOutcome] = []
        for file in files {
            var outcome = FileRepair.repair(file, write: write, keep: keep, shouldStop: StopSignals.isStopPending)
            if ofAnUnfinishedRecording && outcome.isRawSamples {
                // Whole, not a file repair failed on (which would keep the recording listed for ever).
                outcome = RepairOutcome(path: file, analysis: nil, result: .sound)
                Console.notice("\(file): nothing to do (not FLAC, Ogg Opus or WAV: raw samples, with no header to set)")
            } else {
                Console.notice(outcome.line)
            }
            outcomes.append(outcome)
            if case .failed(let failure) = outcome.result, failure.kind == .interrupted { break }
        }
        return outcomes
    }

    /// The most serious outcome's exit code (0 for none).
    static func exitCode(_ outcomes: [RepairOutcome]) -> Int32 {
        outcomes.map(\.exitCode).max { severity($0) < severity($1) } ?? 0
    }

    /// How serious each exit code is, for a run over several files: the worst is reported.
    static func severity(_ code: Int32) -> Int {
        [0, 1, 2, 65, 66, 75, 73, 74, 130].firstIndex(of: code) ?? 0
    }
}

/// Whether anything is at `path`. The corresponding C function is `lstat`.
func somethingExists(at path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

extension RepairOutcome {
    /// Of a file of hark's recording: none of the containers repair reads, so its raw output
    /// (`--format raw`), whose samples are as they were written, with no header to set.
    var isRawSamples: Bool {
        if case .failed(let failure) = result, failure.kind == .unrecognised { true } else { false }
    }

    /// Whether the file is whole now: it was, or this run repaired it.
    var leavesFileWhole: Bool {
        switch result {
        case .sound, .repaired: true
        case .wouldRepair, .failed: false
        }
    }

    var exitCode: Int32 {
        switch result {
        case .sound: 0
        case .repaired: 1
        case .wouldRepair: 2
        case .failed(let failure):
            switch failure.kind {
            case .cannotRepair, .unrecognised, .verificationFailed: 65
            case .cannotOpen: 66
            case .cannotCreate: 73
            case .ioError: 74
            case .inUse: 75
            case .interrupted: 130
            }
        }
    }
}
