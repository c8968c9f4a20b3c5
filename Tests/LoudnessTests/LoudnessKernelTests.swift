import AudioFormat
import Foundation
import LoudnessKernels
import SignalGenerator
import Testing
@testable import Loudness

/// The meter's two inner loops are built twice (`LoudnessKernelChoice`): portable, and for AVX2
/// with FMA where the processor has both. The portable build must round exactly as the filter's
/// formula written out does; the AVX2 build must measure the same loudness to far below what a tag
/// or a summary prints; and the choice must follow what the processor has.
@Suite struct LoudnessKernelTests {
    static let hasAVX2 = LoudnessKernelChoice.available.contains(.avx2FMA)
    static let noAVX2 = "this processor lacks AVX2 or FMA (or the build is not for x86-64): only the portable loops run"

    /// BS.1770's K-weighting of one channel as a plain scalar loop, `Double`, each stage direct
    /// form I with its terms in the order the portable kernel adds them: the sum of squares.
    static func referenceSum(_ channel: [Double], sampleRate: Int) -> Double {
        let c = KWeightingCoefficients(sampleRate: sampleRate)
        var (x1, x2, y1, y2, z1, z2, sum) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for x in channel {
            let y = (c.shelfB0 * x + c.shelfB1 * x1 + c.shelfB2 * x2 - c.shelfA2 * y2) - c.shelfA1 * y1
            let z = (y - 2 * y1 + y2 - c.highPassA2 * z2) - c.highPassA1 * z1
            (x2, x1, y2, y1, z2, z1) = (x1, x, y1, y, z1, z)
            sum += z * z
        }
        return sum
    }

    /// Full-scale 32-bit white noise, interleaved, from `seed`.
    static func noise32(channels: Int, frames: Int, seed: UInt64) -> [Int32] {
        var random = SplitMix64(seed: seed)
        return (0..<(channels * frames)).map { _ in Int32(truncatingIfNeeded: random.next()) }
    }

    /// Each channel's portable K-weighted sum is the scalar formula's, bit for bit: S16, S32 and
    /// float, in pairs, groups of four and a group of three (5 and 7 channels).
    @Test(arguments: [1, 2, 5, 7, 8])
    func thePortableLoopRoundsAsTheFormula(channels: Int) {
        let frames = 9_600, rate = 48_000
        let s32 = Self.noise32(channels: channels, frames: frames, seed: 0xABC0 + UInt64(channels))
        let s16 = s32.map { Int16(truncatingIfNeeded: $0 >> 16) }
        let float = s32.map { Float($0) / 2_147_483_648 }
        func sums<Sample: MeasuredSample>(_ samples: [Sample]) -> [Double] {
            (0..<channels).map { channel in
                var filter = KWeightingFilter(channels: channels, sampleRate: rate, kernels: .portable)
                samples.withUnsafeBufferPointer { filter.add($0.baseAddress!, frames: frames) }
                var weights = [Double](repeating: 0, count: channels)
                weights[channel] = 1
                return filter.takeWeightedSum(weights: weights)
            }
        }
        func references<Sample: MeasuredSample>(_ samples: [Sample]) -> [Double] {
            (0..<channels).map { channel in
                Self.referenceSum(stride(from: channel, to: samples.count, by: channels).map { Sample.fraction(samples[$0]) },
                                  sampleRate: rate)
            }
        }
        #expect(sums(s16) == references(s16), "S16, \(channels) channels")
        #expect(sums(s32) == references(s32), "S32, \(channels) channels")
        #expect(sums(float) == references(float), "float, \(channels) channels")
    }

    /// Both builds measure the same programme alike: integrated loudness within 1e-9 LU, the
    /// loudness range within one of its 0.01 LU histogram steps, the true peak within 1e-6 of its
    /// value, the sample peak exactly (no arithmetic).
    @Test(.enabled(if: hasAVX2, Comment(rawValue: noAVX2)),
          arguments: [
              Programme("music, stereo S16 48 kHz", PCMFormat.s16(), TestSignal.bytes(TestSignal.music(seconds: 6), as: .s16LE)),
              Programme("speech-like, stereo S16 48 kHz", PCMFormat.s16(), TestSignal.bytes(TestSignal.speechLike(seconds: 6), as: .s16LE)),
              Programme("noise, mono float 44.1 kHz", PCMFormat(sampleFormat: .floatLE, channels: 1, sampleRate: 44_100),
               TestSignal.bytes(TestSignal.whiteNoise(peakDBFS: -6, seconds: 4, channels: 1, sampleRate: 44_100), as: .floatLE)),
              Programme("music, 5.1 S24 96 kHz", PCMFormat(sampleFormat: .s24LE, channels: 6, sampleRate: 96_000),
               TestSignal.bytes(TestSignal.music(seconds: 4, channels: 6, sampleRate: 96_000), as: .s24LE)),
              Programme("music, 7 channels S32 48 kHz", PCMFormat(sampleFormat: .s32LE, channels: 7, sampleRate: 48_000),
               TestSignal.bytes(TestSignal.music(seconds: 4, channels: 7), as: .s32LE)),
              Programme("music, 7.1 S32 192 kHz", PCMFormat(sampleFormat: .s32LE, channels: 8, sampleRate: 192_000),
               TestSignal.bytes(TestSignal.music(seconds: 3, channels: 8, sampleRate: 192_000), as: .s32LE)),
          ])
    func theAVX2BuildMeasuresAsThePortableOne(_ programme: Programme) throws {
        let (name, format, bytes) = (programme.name, programme.format, programme.bytes)
        let portable = try measured(bytes, format: format, pieceFrames: 4_800, kernels: .portable)
        let fused = try measured(bytes, format: format, pieceFrames: 4_800, kernels: .avx2FMA)
        let integrated = try #require(portable.integratedLoudness), fusedIntegrated = try #require(fused.integratedLoudness)
        #expect(abs(integrated - fusedIntegrated) < 1e-9, "\(name): \(integrated) against \(fusedIntegrated) LUFS")
        #expect(abs((portable.loudnessRange ?? 0) - (fused.loudnessRange ?? 0)) <= 0.01 + 1e-12, "\(name): loudness range")
        #expect(abs(portable.truePeak - fused.truePeak) <= 1e-6 * portable.truePeak, "\(name): true peak")
        #expect(portable.samplePeak == fused.samplePeak, "\(name): sample peak")
        print("LoudnessTests: \(name): \(integrated) LUFS portable, \(fusedIntegrated) with AVX2 and FMA")
    }

    /// The largest magnitude of 32-bit samples (the true-peak screening's pass, the whole true
    /// peak from 192 kHz) is what `normalised` gives the largest |x|, bit for bit, although the
    /// pass converts each sample to `Float` before comparing: with the extreme first, in the middle
    /// and last (so in a vector's lanes and in the tail), negative or positive, `Int32.min` and
    /// `Int32.max`, and values that round (2^24 + 1 and its neighbours, 2^31 − 1 rounding up to
    /// 2^31).
    @Test func theLargestMagnitudeOfInt32IsTheLargestSampleRounded() {
        let extremes: [Int32] = [.min, .max, -.max, 16_777_217, -16_777_217, 16_777_215, 16_777_216,
                                 2_147_483_520, 2_147_483_583, 2_147_483_584, -2_147_483_584, 1, -1, 0]
        var random = SplitMix64(seed: 0x5A3F)
        for count in [0, 1, 7, 8, 9, 15, 16, 17, 64, 67] {
            for extreme in extremes {
                for position in Set([0, count / 2, max(0, count - 1)]) where count > 0 || position == 0 {
                    // Background samples below the extreme's magnitude (or zeros for a tiny one).
                    let bound = Int64(extreme.magnitude) / 2
                    var samples = (0..<count).map { _ in
                        bound == 0 ? Int32(0) : Int32(Int64(random.next() % UInt64(2 * bound + 1)) - bound)
                    }
                    if count > 0 { samples[position] = extreme }
                    let largest = samples.map { Int64($0).magnitude }.max() ?? 0
                    let expected = Float(largest) * (1 / 2_147_483_648)
                    // One more sample past the end, never read, so that even no samples have an address.
                    let found = (samples + [.max]).withUnsafeBufferPointer { Int32.largestMagnitude($0.baseAddress!, count: count) }
                    #expect(found == expected, "\(count) samples, \(extreme) at \(position)")
                }
            }
        }
    }

    /// The fastest choice follows the processor as the kernel reports it (/proc/cpuinfo's flags):
    /// AVX2 and FMA both present, or the portable loops.
    @Test func theChoiceFollowsTheProcessor() throws {
        #if arch(x86_64)
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = try #require(cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") })
        let words = Set(flags.split(separator: " ").map(String.init))
        let expected: LoudnessKernelChoice = words.contains("avx2") && words.contains("fma") ? .avx2FMA : .portable
        #expect(LoudnessKernelChoice.fastest == expected, "flags say \(expected)")
        print("LoudnessTests: the meter's loops here: \(LoudnessKernelChoice.fastest)")
        #else
        #expect(LoudnessKernelChoice.available == [.portable])
        #endif
    }
}

/// One programme the two builds measure. Its test description is its name: Swift Testing prints a
/// parameterized test's arguments, and the bytes printed whole made a 135 MB log.
struct Programme: Sendable, CustomTestStringConvertible {
    let name: String
    let format: PCMFormat
    let bytes: [UInt8]

    init(_ name: String, _ format: PCMFormat, _ bytes: [UInt8]) {
        (self.name, self.format, self.bytes) = (name, format, bytes)
    }

    var testDescription: String { "\(name) (\(bytes.count) bytes)" }
}
