import AudioFormat
import Loudness
import Testing

/// Every capture format reaches the filters as the same signal: S16 and S32 directly, S24 shifted
/// into 32-bit samples, float directly. The test signal is 16-bit, exact in every format, so the
/// readings should agree to rounding.
@Suite struct SampleFormatTests {
    static let tolerance = 1e-9

    static let music = TestSignal.music(seconds: 5)

    @Test(arguments: [SampleFormat.s24LE, .s32LE, .floatLE])
    func measuresLikeS16(_ sampleFormat: SampleFormat) throws {
        let reference = try measured(TestSignal.bytes(Self.music, as: .s16LE), format: .s16())
        let format = PCMFormat(sampleFormat: sampleFormat, channels: 2, sampleRate: 48_000)
        let measurement = try measured(TestSignal.bytes(Self.music, as: sampleFormat), format: format)
        expectSame(measurement, reference)
    }

    /// ALSA's S24_LE leaves the container's top byte unspecified: whatever is there is ignored.
    @Test(arguments: [UInt8(0x00), 0xFF, 0x5A])
    func s24IgnoresTheTopByte(_ topByte: UInt8) throws {
        let format = PCMFormat(sampleFormat: .s24LE, channels: 2, sampleRate: 48_000)
        let clean = try measured(TestSignal.bytes(Self.music, as: .s24LE), format: format)
        let dirty = try measured(TestSignal.bytes(Self.music, as: .s24LE, topByte: topByte), format: format)
        #expect(clean == dirty)
    }

    /// One frame at a time, the staging buffer's size and more than it at once: the same result.
    @Test(arguments: [SampleFormat.s16LE, .s24LE, .s32LE, .floatLE])
    func pieceSizeDoesNotMatter(_ sampleFormat: SampleFormat) throws {
        let format = PCMFormat(sampleFormat: sampleFormat, channels: 2, sampleRate: 48_000)
        let bytes = TestSignal.bytes(Array(Self.music.prefix(2 * 48_000 * 3)), as: sampleFormat)
        let whole = try measured(bytes, format: format, pieceFrames: 48_000 * 3)
        for pieceFrames in [1, 333, 1024, 1025, 4800] {
            #expect(try measured(bytes, format: format, pieceFrames: pieceFrames) == whole, "pieces of \(pieceFrames)")
        }
    }

    /// Mono and five channels (the last vector lane unused), with digital silence in between (the
    /// K-weighting's state flushed to zero at a step): still the same whatever the pieces.
    @Test(arguments: [1, 5])
    func pieceSizeDoesNotMatterWithSilenceAndOddChannelCounts(_ channels: Int) throws {
        let format = PCMFormat.s16(channels: channels)
        let sound = TestSignal.music(seconds: 1.5, channels: channels)
        let samples = sound + [Int16](repeating: 0, count: channels * 48_000 * 2) + sound
        let bytes = TestSignal.bytes(samples, as: .s16LE)
        let whole = try measured(bytes, format: format, pieceFrames: samples.count / channels)
        #expect(whole.integratedLoudness != nil)
        for pieceFrames in [1, 333, 4800, 4801] {
            #expect(try measured(bytes, format: format, pieceFrames: pieceFrames) == whole, "pieces of \(pieceFrames)")
        }
    }

    /// Input that is not aligned for its sample type (a byte buffer at an odd address) is copied
    /// before the filters read it, and measures the same.
    @Test(arguments: [SampleFormat.s16LE, .s32LE])
    func unalignedInputMeasuresTheSame(_ sampleFormat: SampleFormat) throws {
        let format = PCMFormat(sampleFormat: sampleFormat, channels: 2, sampleRate: 48_000)
        let bytes = TestSignal.bytes(Self.music, as: sampleFormat)
        let aligned = try measured(bytes, format: format)
        let meter = try #require(LoudnessMeter(format: format))
        let shifted = [UInt8(0)] + bytes
        shifted.withUnsafeBytes { all in
            let unaligned = UnsafeRawBufferPointer(rebasing: all[1...])
            #expect(Int(bitPattern: unaligned.baseAddress) % 2 == 1)
            meter.measure(unaligned)
        }
        #expect(meter.measurement == aligned)
    }

    /// Float input is measured within the meter's limit: a NaN as silence, ±∞ and anything past
    /// the limit as ±limit (±1 for a file that clips floats, FLAC and Opus; else ±10^6), so
    /// nothing non-finite enters the K-weighting filter's state (where it would stay for good and
    /// make every figure NaN), and a clipping file's figures are those of what it holds.
    @Test(arguments: [false, true])
    func floatSamplesAreMeasuredWithinTheLimit(clipsFloats: Bool) throws {
        let format = PCMFormat(sampleFormat: .floatLE, channels: 2, sampleRate: 48_000)
        let limit = clipsFloats ? 1 : LoudnessMeter.largestMeasuredFloat
        let poisons: [(sample: Float, measuredAs: Float)] = [
            (.nan, 0), (.infinity, limit), (-.infinity, -limit), (3e38, limit), (-2e38, -limit), (1.5, clipsFloats ? 1 : 1.5),
        ]
        let places = Array(stride(from: 1_000, to: Self.music.count, by: 50_000))
        var expected = TestSignal.bytes(Self.music, as: .floatLE)
        var bytes = expected
        for (number, index) in places.enumerated() {
            let poison = poisons[number % poisons.count]
            withUnsafeBytes(of: poison.sample.bitPattern.littleEndian) { bytes.replaceSubrange(4 * index..<4 * index + 4, with: $0) }
            withUnsafeBytes(of: poison.measuredAs.bitPattern.littleEndian) { expected.replaceSubrange(4 * index..<4 * index + 4, with: $0) }
        }
        let measurement = try measured(bytes, format: format, clipsFloats: clipsFloats)
        #expect(measurement == (try measured(expected, format: format, clipsFloats: clipsFloats)))
        #expect(measurement.integratedLoudness?.isFinite == true && measurement.truePeak.isFinite)
    }

    @Test func aPartialFrameIsAProgrammingError() async {
        await #expect(processExitsWith: .failure) {
            let meter = LoudnessMeter(format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000))!
            [UInt8](repeating: 0, count: 6).withUnsafeBytes { meter.measure($0) }
        }
    }

    func expectSame(_ measurement: LoudnessMeasurement, _ reference: LoudnessMeasurement,
                    sourceLocation: SourceLocation = #_sourceLocation) {
        func close(_ a: Double?, _ b: Double?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case let (a?, b?): abs(a - b) <= Self.tolerance
            default: false
            }
        }
        #expect(close(measurement.integratedLoudness, reference.integratedLoudness), sourceLocation: sourceLocation)
        #expect(close(measurement.loudnessRange, reference.loudnessRange), sourceLocation: sourceLocation)
        #expect(close(measurement.truePeak, reference.truePeak), sourceLocation: sourceLocation)
        #expect(close(measurement.samplePeak, reference.samplePeak), sourceLocation: sourceLocation)
        #expect(measurement.seconds == reference.seconds, sourceLocation: sourceLocation)
    }
}
