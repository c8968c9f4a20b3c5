import LoudnessKernels
import SignalGenerator
import Testing
@testable import Loudness

/// The K-weighting filter runs channels in groups of four lanes and a last pair
/// (`KWeightingFilter`'s `groups`): each channel must come out exactly as if it were filtered
/// alone, whatever group and lane it lands in, and the padding lanes must never be summed.
@Suite struct KWeightingFilterTests {
    /// A different signal per channel: white noise from its own seed, at its own level.
    static func channelSignal(_ channel: Int, frames: Int) -> [Int16] {
        var random = SplitMix64(seed: 0xC0FFEE + UInt64(channel))
        let amplitude = 30_000.0 / Double(channel + 1)
        return (0..<frames).map { _ in Int16((amplitude * (Double(random.next(below: 2_000_001)) / 1_000_000 - 1)).rounded()) }
    }

    /// The sum of squared K-weighted outputs of one channel filtered on its own (a mono filter),
    /// taken after `frames` in pieces of `piece`.
    static func aloneSum<Sample: MeasuredSample>(_ signal: [Sample], sampleRate: Int, piece: Int,
                                                 kernels: LoudnessKernelChoice) -> Double {
        var filter = KWeightingFilter(channels: 1, sampleRate: sampleRate, kernels: kernels)
        var start = 0
        signal.withUnsafeBufferPointer { buffer in
            while start < buffer.count {
                let count = min(piece, buffer.count - start)
                filter.add(buffer.baseAddress! + start, frames: count)
                start += count
            }
        }
        var one = 1.0
        return filter.takeWeightedSum(weights: &one)
    }

    /// The sample types the filter reads, each channel's 16-bit signal carried into it: S16 as it
    /// is, S32 with the low half filled too (so every bit reaches the filter), float scaled.
    enum Kind: CaseIterable, CustomStringConvertible {
        case s16, s32, float
        var description: String {
            switch self {
            case .s16: "S16"
            case .s32: "S32"
            case .float: "float"
            }
        }
    }

    /// For every channel count from 1 to 9 (one pair; a group of four; four and a pair; two groups
    /// of four; two groups and a pair), each channel's sum, read alone through a one-hot weight,
    /// is bit for bit its sum filtered alone, for each sample type (each reads its frames its own
    /// way: one vector load for a full group, lane by lane otherwise) and each build of the loop
    /// this processor runs.
    @Test(arguments: 1...9, LoudnessKernelChoice.available)
    func everyChannelIsFilteredAsIfAlone(channels: Int, kernels: LoudnessKernelChoice) {
        let frames = 4_800
        let signals = (0..<channels).map { Self.channelSignal($0, frames: frames) }
        for kind in Kind.allCases {
            switch kind {
            case .s16: Self.check(signals, kernels: kernels, kind: kind)
            case .s32: Self.check(signals.map { $0.map { Int32($0) << 16 | Int32($0 &* 7) & 0xFFFF } }, kernels: kernels, kind: kind)
            case .float: Self.check(signals.map { $0.map { Float($0) / 32_768 } }, kernels: kernels, kind: kind)
            }
        }
    }

    static func check<Sample: MeasuredSample>(_ signals: [[Sample]], kernels: LoudnessKernelChoice, kind: Kind) {
        let channels = signals.count, frames = signals[0].count, rate = 44_100, piece = 777
        var interleaved = [Sample]()
        interleaved.reserveCapacity(frames * channels)
        for frame in 0..<frames {
            for channel in 0..<channels { interleaved.append(signals[channel][frame]) }
        }
        for channel in 0..<channels {
            var filter = KWeightingFilter(channels: channels, sampleRate: rate, kernels: kernels)
            var start = 0
            interleaved.withUnsafeBufferPointer { buffer in
                while start < frames {
                    let count = min(piece, frames - start)
                    filter.add(buffer.baseAddress! + start * channels, frames: count)
                    start += count
                }
            }
            var weights = [Double](repeating: 0, count: channels)
            weights[channel] = 1
            let sum = filter.takeWeightedSum(weights: weights)
            #expect(sum == Self.aloneSum(signals[channel], sampleRate: rate, piece: piece, kernels: kernels),
                    "\(kind), channel \(channel + 1) of \(channels), \(kernels)")
            // The sums were cleared: nothing is left to read, in any lane.
            #expect(filter.takeWeightedSum(weights: [Double](repeating: 1, count: channels)) == 0)
        }
    }
}
