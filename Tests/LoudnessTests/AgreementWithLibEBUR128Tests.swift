import AudioFormat
import Loudness
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// hark's meter against libebur128 (exact mode) on the same 16-bit frames: the K-weighting, the
/// channel weights, the 400 ms blocks and both gates, checked far more tightly than FFmpeg's
/// printed tenths allow (`AgreementWithFFmpegTests`).
///
/// A single 400 ms block measured on its own is that block's loudness in both meters, with no
/// histogram in between: it checks the filter and the channel weighting to rounding. Whole signals
/// check the blocks and the gates: hark's histogram gates the blocks within 0.05 LU of the
/// relative gate by their bin's centre, so the integrated loudness may differ by a hair.
@Suite struct AgreementWithLibEBUR128Tests {
    /// Both meters' readings of `samples`.
    static func readings(_ samples: [Int16], channels: Int, sampleRate: Int = 48_000)
        throws -> (hark: LoudnessMeasurement, libebur128: (integrated: Double?, samplePeak: Double)) {
        let format = PCMFormat.s16(channels: channels, rate: sampleRate)
        let hark = try measured(TestSignal.bytes(samples, as: .s16LE), format: format, pieceFrames: 1_111)
        let reference = try #require(LibEBUR128Reference(channels: channels, sampleRate: sampleRate))
        samples.withUnsafeBufferPointer { reference.add($0.baseAddress!, frames: samples.count / channels) }
        return (hark, (reference.integratedLoudness, reference.samplePeak))
    }

    /// 400 ms of a sine at frequencies across the band, at rates from 8 to 192 kHz: the same
    /// loudness to 1e-5 LU, so the same filter at every rate. (At 48 kHz they agree to 5e-9; at
    /// 192 kHz to 3e-6, where libebur128's single fourth-order filter, its poles close to z = 1,
    /// rounds more than two second-order stages.)
    @Test(arguments: [8_000, 44_100, 48_000, 96_000, 192_000])
    func oneBlockOfSineAgreesAtEveryFrequency(sampleRate: Int) throws {
        for frequency in [20.0, 38, 100, 500, 1000, 1682, 3000, 6000, 10_000, 15_000, 19_000]
        where frequency < Double(sampleRate) / 2 {
            let samples = TestSignal.sine(frequency: frequency, peakDBFS: -6, seconds: 0.4, sampleRate: sampleRate)
            let (hark, libebur128) = try Self.readings(samples, channels: 2, sampleRate: sampleRate)
            let ours = try #require(hark.integratedLoudness, "\(frequency) Hz at \(sampleRate) Hz")
            let theirs = try #require(libebur128.integrated, "\(frequency) Hz at \(sampleRate) Hz")
            #expect(abs(ours - theirs) < 1e-5, "\(frequency) Hz at \(sampleRate) Hz: \(ours) against \(theirs)")
        }
    }

    /// From 192 kHz neither meter interpolates: the true peak is the sample peak in both, for a
    /// sine whose crest falls between its samples (fs/4 at 45°: every sample at 0.707 of it), to
    /// the last bit of the 16-bit samples.
    @Test(arguments: [192_000, 384_000])
    func from192kHzBothReadTheSamplePeakAsTheTruePeak(sampleRate: Int) throws {
        let frames = sampleRate / 2
        let samples = (0..<frames).flatMap { frame -> [Int16] in
            let value = Int16((16_384 * sin(.pi * Double(frame) / 2 + .pi / 4)).rounded())
            return [value, value / 2]
        }
        let hark = try measured(TestSignal.bytes(samples, as: .s16LE), format: .s16(channels: 2, rate: sampleRate),
                                pieceFrames: 1_111)
        let reference = try #require(LibEBUR128Reference(channels: 2, sampleRate: sampleRate, truePeak: true))
        samples.withUnsafeBufferPointer { reference.add($0.baseAddress!, frames: frames) }
        #expect(hark.truePeak == hark.samplePeak)
        #expect(hark.truePeak == reference.truePeak, "\(hark.truePeak) against libebur128's \(reference.truePeak)")
        #expect(hark.samplePeak == Double(11_585) / 32_768)
    }

    /// 400 ms blocks of noise, music and 5.1 music with each channel at its own level (the LFE
    /// left out, the surrounds weighted 1.41), taken from several places in the signal.
    @Test func oneBlockOfNoiseAndMusicAgrees() throws {
        let blockFrames = 19_200
        let noise = TestSignal.whiteNoise(peakDBFS: -3, seconds: 2)
        let music = TestSignal.music(seconds: 2)
        let surround = TestSignal.scaled(TestSignal.music(seconds: 2, channels: 6),
                                         channelGains: [1, 0.5, 0.25, 1, 0.7, 0.1])
        for (name, samples, channels) in [("noise", noise, 2), ("music", music, 2), ("5.1", surround, 6)] {
            for start in stride(from: 0, to: 48_000 * 2 - blockFrames, by: 13_337) {
                let block = Array(samples[(start * channels)..<((start + blockFrames) * channels)])
                let (hark, libebur128) = try Self.readings(block, channels: channels)
                let ours = try #require(hark.integratedLoudness, "\(name) from frame \(start)")
                let theirs = try #require(libebur128.integrated, "\(name) from frame \(start)")
                #expect(abs(ours - theirs) < 1e-6, "\(name) from frame \(start): \(ours) against \(theirs)")
                #expect(abs(hark.samplePeak - libebur128.samplePeak) < 1e-7, "\(name) from frame \(start)")
            }
        }
    }

    /// Whole signals whose blocks spread over many levels, so that both gates gate blocks:
    /// speech-like pauses, music in sections 18 dB apart, mono and 44.1 kHz.
    @Test func wholeSignalsAgree() throws {
        let cases: [(String, [Int16], Int, Int)] = [
            ("speech-like", TestSignal.speechLike(seconds: 40), 2, 48_000),
            ("music, changing level", TestSignal.musicWithChangingLevel(seconds: 36), 2, 48_000),
            ("music, mono, 44.1 kHz", TestSignal.music(seconds: 20, channels: 1, sampleRate: 44_100), 1, 44_100),
            ("noise in 1 s sections about 2 LU either side of the absolute gate", Self.noiseAroundTheAbsoluteGate(), 2, 48_000),
        ]
        for (name, samples, channels, rate) in cases {
            let (hark, libebur128) = try Self.readings(samples, channels: channels, sampleRate: rate)
            let ours = try #require(hark.integratedLoudness, "\(name)")
            let theirs = try #require(libebur128.integrated, "\(name)")
            #expect(abs(ours - theirs) < 0.01, "\(name): \(ours) against \(theirs)")
            #expect(abs(hark.samplePeak - libebur128.samplePeak) < 1e-7, "\(name)")
        }
    }

    /// White noise in 1 s sections read at about −68 and −72 LUFS: the blocks of the quieter
    /// sections fall under the absolute gate (−70 LUFS), so the gate's place decides the result
    /// (−68.3 LUFS; blocks let through below the gate would lower it).
    static func noiseAroundTheAbsoluteGate() -> [Int16] {
        (0..<20).flatMap { second in
            TestSignal.whiteNoise(seed: UInt64(second + 1), peakDBFS: second % 2 == 0 ? -69.3 : -73.3, seconds: 1)
        }
    }

    /// Under one block, and digital silence, neither meter gives a loudness.
    @Test func silenceAndUnderOneBlockHaveNoLoudness() throws {
        let (silent, silentReference) = try Self.readings([Int16](repeating: 0, count: 2 * 48_000), channels: 2)
        #expect(silent.integratedLoudness == nil && silentReference.integrated == nil)
        let short = TestSignal.sine(peakDBFS: -6, seconds: 0.39)
        let (brief, briefReference) = try Self.readings(short, channels: 2)
        #expect(brief.integratedLoudness == nil && briefReference.integrated == nil)
    }

    /// A loud passage, two minutes of digital silence (the filter's state decays towards zero,
    /// which hark flushes before it becomes subnormal), a loud passage again: the same loudness as
    /// libebur128's.
    @Test func silenceBetweenSoundsAgrees() throws {
        let loud = TestSignal.music(seconds: 2)
        let samples = loud + [Int16](repeating: 0, count: 2 * 48_000 * 120) + loud
        let (hark, libebur128) = try Self.readings(samples, channels: 2)
        let ours = try #require(hark.integratedLoudness)
        let theirs = try #require(libebur128.integrated)
        #expect(abs(ours - theirs) < 0.01, "\(ours) against \(theirs)")
    }
}
