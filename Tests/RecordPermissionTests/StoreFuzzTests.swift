import Foundation
import SignalGenerator
import Testing
@testable import RecordPermission

/// Property test of the store reader: mutated store files (bit flips, insertions, deletions,
/// truncations, spliced JSON tokens) never grant and never crash.
///
/// A seeded short run is part of the suite; `scripts/fuzz-store` runs a million inputs by setting
/// `HARK_FUZZ_ITERATIONS`.
@Suite struct StoreFuzzTests {
    static var iterations: Int {
        ProcessInfo.processInfo.environment["HARK_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 3_000
    }

    @Test func mutatedStoresNeverGrant() throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        try gate.setDecision(.denied, for: .microphone)
        let denied = Array(try Data(contentsOf: URL(fileURLWithPath: gate.store.path)))
        // Another app's grant: the reader must check whose record it is.
        let otherApp = Array(String(decoding: denied, as: UTF8.self)
            .replacingOccurrences(of: "denied", with: "authorized")
            .replacingOccurrences(of: testManifest.appIdentifier, with: "org.example.someone-else").utf8)
        let seeds = [denied, otherApp]
        let tokens: [[UInt8]] = ["\"authorized\"", "{", "}", "[", "]", ":", ",", "null", "true", "1e999", "\"\\u0000\"",
                                 "\"status\"", "\"decisions\"", "\"microphone\"", "\"app\""].map { Array($0.utf8) }
        var random = SplitMix64(seed: 0x4841_524B)
        var granted = 0
        for iteration in 0..<Self.iterations {
            var bytes = seeds[iteration % seeds.count]
            for _ in 0...random.next(below: 4) {
                switch random.next(below: 6) {
                case 0 where !bytes.isEmpty: bytes[random.next(below: bytes.count)] ^= UInt8(1 << random.next(below: 8))
                case 1: bytes.insert(UInt8(random.next(below: 256)), at: random.next(below: bytes.count + 1))
                case 2 where !bytes.isEmpty: bytes.remove(at: random.next(below: bytes.count))
                case 3: bytes = Array(bytes.prefix(random.next(below: bytes.count + 1)))
                case 4: bytes.insert(contentsOf: tokens[random.next(below: tokens.count)], at: random.next(below: bytes.count + 1))
                default:
                    let start = random.next(below: bytes.count + 1)
                    bytes.insert(contentsOf: bytes[start...].prefix(16), at: random.next(below: bytes.count + 1))
                }
            }
            try overwrite(gate.store.path, with: bytes)
            if gate.authorizationStatus(for: .audio) == .authorized {
                granted += 1
                Issue.record("iteration \(iteration) granted: \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(granted == 0)
    }
}

/// Replaces a file's contents with plain POSIX calls: Foundation's `Data.write` fsyncs, which
/// would make a million iterations take half an hour.
private func overwrite(_ path: String, with bytes: [UInt8]) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
    defer { close(descriptor) }
    guard bytes.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == bytes.count else {
        throw CocoaError(.fileWriteUnknown)
    }
}
