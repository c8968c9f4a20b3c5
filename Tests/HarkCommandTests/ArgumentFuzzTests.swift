import ArgumentParser
import Foundation
import SignalGenerator
import Testing
@testable import hark

/// Property test of the command line: random argument lists built from hark's own options, values
/// that are valid, out of range, malformed or hostile, never crash the parser. Each either parses
/// to a command whose validation passed, or fails with a usage error (exit 64) or a help request (0).
///
/// A seeded short run is part of the suite; `scripts/fuzz-arguments` runs a million lists (and
/// 10,000 for the comparison of `record`'s own parser with the whole tree).
@Suite struct ArgumentFuzzTests {
    static var iterations: Int {
        ProcessInfo.processInfo.environment["HARK_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 5_000 / sanitizerDivisor
    }

    /// Under AddressSanitizer the library's parsing runs about five times slower (this suite took
    /// 124 s alone, half its shard's time, against 27 s in a debug build), so a sanitized run takes a
    /// fifth of the lists: still thousands of parses for the sanitizer to watch, and the plain run
    /// keeps the full count.
    static let sanitizerDivisor: Int = {
        let process = dlopen(nil, RTLD_NOW)
        return dlsym(process, "__asan_init") != nil || dlsym(process, "__tsan_init") != nil ? 5 : 1
    }()

    static let words: [String] = [
        "record", "devices", "permissions", "grant", "deny", "reset", "log", "status", "microphone", "camera",
        "-o", "--output", "-", "x.flac", "x.opus", "x.ogg", "x.wav", "", "/", "/dev/null", "--format", "flac", "opus", "mp3",
        "-D", "--device", "default", "hw:0", "-r", "--rate", "48000", "0", "-1", "1e12", "nan", "inf", "44100.5",
        "-c", "--channels", "2", "9", "-f", "--sample-format", "S16_LE", "s24_le", "FLOAT", "S8",
        "-d", "--duration", "0.25", "-0", "--period-time", "--buffer-time", "1000", "20000000",
        "--compression-level", "8", "--verify", "--bitrate", "6", "513", "--vbr", "--cvbr", "--hard-cbr",
        "--complexity", "11", "--frame-size", "2.5", "7", "--application", "voip", "lowdelay", "--max-delay",
        "--tag", "TITLE=x", "=x", "K=", "--ring-seconds", "0.05", "61", "-v", "-q", "--quiet", "--verbose",
        "--json", "--since", "7d", "2026-11-21", "yesterday", "--app", "org.example.x", "../x", "--help", "-h",
        "--version", "--", "-x", "--no-such-option", "\u{0}", "é", String(repeating: "A", count: 4096),
    ]

    @Test func randomArgumentListsNeverCrashTheParser() {
        var random = SplitMix64(seed: 0x4152_4753)
        var outcomes: [Int32: Int] = [:]
        for _ in 0..<Self.iterations {
            let count = random.next(below: 7)
            let arguments = (0..<count).map { _ in Self.words[random.next(below: Self.words.count)] }
            do {
                _ = try Hark.parseAsRoot(arguments)
                outcomes[0, default: 0] += 1
            } catch {
                let code = Hark.exitCode(for: error).rawValue
                #expect(code == 0 || code == 64, "\(arguments) → exit \(code)")
                outcomes[code, default: 0] += 1
            }
        }
        // Both outcomes occur, so the generator reaches past the first error.
        #expect((outcomes[0] ?? 0) > 0 && (outcomes[64] ?? 0) > 0, "\(outcomes)")
    }

    /// `Hark.parseCommand` parses `hark record …` on its own, not through the whole tree: for
    /// random `record` argument lists (and the words that send it to the tree), both ways give the
    /// same command with the same values, or the same error message and exit code.
    @Test func recordParsedOnItsOwnActsAsTheWholeTree() {
        // About 90 ms a list in a debug build, nearly all of it the library's messages and
        // reflection, so fewer lists than above; scripts/fuzz-arguments runs 10,000.
        let iterations = ProcessInfo.processInfo.environment["HARK_PARSE_COMPARE_ITERATIONS"].flatMap(Int.init) ?? 300 / Self.sanitizerDivisor
        var random = SplitMix64(seed: 0x5245_4344)
        let recordWords = Self.words + ["-dh", "-help", "--help-hidden", "help", "--generate-completion-script", "bash",
                                        "--experimental-dump-help", "--speech", "--no-loudness", "-o", "y.raw", "--channel-map"]
        var direct = 0
        for _ in 0..<iterations {
            let count = random.next(below: 7)
            let arguments = ["record"] + (0..<count).map { _ in recordWords[random.next(below: recordWords.count)] }
            if !arguments.dropFirst().contains(where: Hark.needsTheWholeTree) { direct += 1 }
            // Most go on to the direct reader (DirectParseTests), whose commands carry their
            // groups' help titles; the outcome leaves those out.
            let ownParser = DirectParseTests.outcome { try Hark.parseCommand(arguments) }
            let wholeTree = DirectParseTests.outcome { try Hark.parseAsRoot(arguments) }
            #expect(ownParser == wholeTree, "\(arguments)")
        }
        // Most lists skip the whole tree (then the direct reader or record's own parser reads
        // them), so that is what is being compared.
        #expect(direct > iterations / 2, "\(direct) of \(iterations)")
    }
}
