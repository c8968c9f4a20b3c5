@testable import Repair
import SignalGenerator
import Testing

/// A Ctrl-C during `hark repair` is taken inside the walks through a file's frames and pages too
/// (`WalkStopCheck`), not only in libFLAC's and libopus's decodes and between copies: the walks
/// look for a stop signal once per mebibyte they move on, and a stop ends the analysis, or the
/// check of a written repair, with nothing changed. The files here hold 3 MiB of damage (noise)
/// in their middle, so the walk's progress, not a decode, is what is measured.
@Suite struct WalkStopTests {
    static let noise: [UInt8] = {
        var random = SplitMix64(seed: 20_261_128)
        return (0..<(3 * WalkStopCheck.stride / 8)).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } }
    }()

    /// A finished seed of `container` with the noise inserted halfway through its audio.
    static func damaged(_ container: RepairFuzzSeed.Container) throws -> [UInt8] {
        let seed = try #require(RepairFuzzSeed.all().first { $0.container == container && !$0.name.contains("killed") })
        let middle = seed.bytes.count * 3 / 4
        return Array(seed.bytes[..<middle]) + noise + Array(seed.bytes[middle...])
    }

    /// Counts the looks, and says stop from look number `stopAt` on (never when nil).
    final class Looks: @unchecked Sendable {
        var count = 0
        let stopAt: Int?
        init(stopAt: Int?) { self.stopAt = stopAt }
        func shouldStop() -> Bool {
            count += 1
            return stopAt.map { count >= $0 } ?? false
        }
    }

    @Test func eachWalkLooksOncePerMebibyteItMovesOn() throws {
        let flac = try Self.damaged(.flac), opus = try Self.damaged(.opus)
        let mebibytes = flac.count / WalkStopCheck.stride
        let flacLooks = Looks(stopAt: nil), opusLooks = Looks(stopAt: nil)
        let walk = try flac.withUnsafeBytes { bytes in
            try FLACFrameWalk(bytes, metadata: FLACMetadata(bytes), shouldStop: flacLooks.shouldStop)
        }
        let stream = try opus.withUnsafeBytes { bytes in try OggOpusStream(bytes, shouldStop: opusLooks.shouldStop) }
        #expect(walk.damaged.count == 1 && walk.damaged[0].count >= Self.noise.count && walk.tail == nil, "the walk went through the noise")
        #expect(stream.damage.count == 1 && stream.damage[0].bytes.count >= Self.noise.count && stream.tail == nil, "the reading went through the noise")
        // At the start, then at each mebibyte passed: 1 + 3 for a file of 3 MiB and a bit.
        #expect(mebibytes == 3 && flacLooks.count == 1 + mebibytes, "\(flacLooks.count) looks over \(flac.count) bytes")
        #expect(opusLooks.count == 1 + opus.count / WalkStopCheck.stride, "\(opusLooks.count) looks over \(opus.count) bytes")
    }

    @Test(arguments: [RepairFuzzSeed.Container.flac, .opus])
    func aStopInsideTheWalkEndsTheAnalysisWithNothingChanged(_ container: RepairFuzzSeed.Container) throws {
        let bytes = try Self.damaged(container)
        let kind: RepairAnalysis.Container = container == .flac ? .flac : .oggOpus
        let unstopped = try bytes.withUnsafeBytes { try FileRepair.analyse($0, as: kind) }
        guard case .repairable = unstopped.verdict else {
            Issue.record("the damaged file is repairable: \(unstopped.problems)")
            return
        }
        // Stopped at the second look: a mebibyte into the walk, in the noise, before any decode.
        let looks = Looks(stopAt: 2)
        let failure = #expect(throws: RepairFailure.self) {
            try bytes.withUnsafeBytes { try FileRepair.analyse($0, as: kind, shouldStop: looks.shouldStop) }
        }
        #expect(failure?.kind == .interrupted && failure?.message == "interrupted; nothing changed", "\(String(describing: failure))")
        #expect(looks.count == 2, "no look after the stop: \(looks.count)")
    }

    /// The check of a written repair reads the file the same way: stopped, it says so (and the
    /// writers put the original back), rather than calling the file broken.
    @Test(arguments: [RepairFuzzSeed.Container.flac, .opus])
    func aStopInsideTheCheckOfARepairIsNotAFailedCheck(_ container: RepairFuzzSeed.Container) throws {
        let bytes = try Self.damaged(container)
        let kind: RepairAnalysis.Container = container == .flac ? .flac : .oggOpus
        let unstopped = bytes.withUnsafeBytes { FileRepair.verify($0, as: kind) }
        #expect(unstopped != nil && unstopped != FileRepair.interruptedCheck, "a damaged file fails the check: \(String(describing: unstopped))")
        let looks = Looks(stopAt: 2)
        #expect(bytes.withUnsafeBytes { FileRepair.verify($0, as: kind, shouldStop: looks.shouldStop) } == FileRepair.interruptedCheck)
    }
}
