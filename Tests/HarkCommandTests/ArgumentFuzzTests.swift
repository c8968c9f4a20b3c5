import ArgumentParser
import Foundation
import SignalGenerator
import Testing
@testable import hark

/// Property test of the command line: random argument lists built from hark's own options, values
/// that are valid, out of range, malformed or hostile, never crash the parser. Each either parses
/// to a command whose validation passed, or fails with a usage error (exit 64) or a help request (0).
///
/// A seeded short run is part of the suite; `scripts/fuzz-arguments` runs a million lists.
@Suite struct ArgumentFuzzTests {
    static var iterations: Int {
        ProcessInfo.processInfo.environment["HARK_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 5_000
    }

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
}
