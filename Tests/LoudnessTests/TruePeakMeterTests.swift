import AudioFormat
import Testing
@testable import Loudness
#if canImport(Glibc)
import Glibc
#endif

/// hark's true-peak meter (BS.1770-4 Annex 2's interpolator with screening): the screening never
/// changes the result, the filter is the Recommendation's, and intersample peaks are found.
@Suite struct TruePeakMeterTests {
    /// A sine at 997 Hz whose level rises steadily from −60 to −0.5 dBFS: nearly every chunk sets
    /// a new peak, so the screening can skip almost nothing.
    static func risingSine(seconds: Double) -> [Int16] {
        let frames = Int(seconds * 48_000)
        var samples = [Int16](repeating: 0, count: 2 * frames)
        for frame in 0..<frames {
            let level = pow(10, (-60 + 59.5 * Double(frame) / Double(frames)) / 20)
            let value = Int16((32767 * level * sin(2 * .pi * 997 * Double(frame) / 48_000)).rounded())
            samples[2 * frame] = value
            samples[2 * frame + 1] = value
        }
        return samples
    }

    /// White noise whose level rises from −60 to −1 dBFS: new, full-band (intersample) peaks.
    static func risingNoise(seconds: Double) -> [Int16] {
        let noise = TestSignal.whiteNoise(seed: 0xF00D, peakDBFS: 0, seconds: seconds)
        return noise.indices.map { index in
            let level = pow(10, (-60 + 59 * Double(index) / Double(noise.count)) / 20)
            return Int16((Double(noise[index]) * level).rounded())
        }
    }

    /// A 100 Hz sine at half scale (true peak 0.5), then a fading-in sine at fs/4 whose samples
    /// stay below 0.5 but whose crest, between them, is at 0.6: a peak that only the filter sees,
    /// in chunks whose samples are all below the peak so far.
    static func peaksBetweenQuieterSamples() -> [Int16] {
        let low = (0..<9_600).map { 0.5 * sin(2 * .pi * 100 * Double($0) / 48_000) }
        let high = (0..<24_000).map { frame in
            let fade = frame < 4_800 ? 0.5 - 0.5 * cos(.pi * Double(frame) / 4_800) : 1
            return fade * 0.6 * sin(.pi * Double(frame) / 2 + .pi / 4)
        }
        return (low + high).flatMap { value in
            let sample = Int16((value * 32_768).rounded())
            return [sample, sample]
        }
    }

    static let signals: [(String, [Int16])] = [
        ("music-like", TestSignal.music(seconds: 4)),
        ("speech-like", TestSignal.speechLike(seconds: 4)),
        ("white noise", TestSignal.whiteNoise(peakDBFS: -6, seconds: 2)),
        ("1 kHz sine", TestSignal.sine(peakDBFS: -3, seconds: 2)),
        ("rising sine", risingSine(seconds: 3)),
        ("rising noise", risingNoise(seconds: 3)),
        ("peaks between quieter samples", peaksBetweenQuieterSamples()),
    ]

    /// The peak of `samples` (stereo S16) fed in pieces of `pieceFrames`.
    static func meter(_ samples: [Int16], screening: Bool = true, pieceFrames: Int = 1_000,
                      kernels: LoudnessKernelChoice = .fastest) -> TruePeakMeter {
        var meter = TruePeakMeter(channels: 2, sampleRate: 48_000, screening: screening, kernels: kernels)
        samples.withUnsafeBufferPointer { all in
            var frame = 0
            let frames = all.count / 2
            while frame < frames {
                let piece = min(pieceFrames, frames - frame)
                meter.add(all.baseAddress! + 2 * frame, frames: piece)
                frame += piece
            }
        }
        return meter
    }

    /// The screening invariant: skipping a chunk whose bound (largest |x| × the largest phase's
    /// L1 norm) is at most the peak so far never changes the peak, to the bit, in each build of
    /// the filter's loop this processor runs.
    @Test(arguments: signals.indices, LoudnessKernelChoice.available)
    func screeningGivesExactlyTheUnscreenedPeak(_ index: Int, kernels: LoudnessKernelChoice) {
        let (name, samples) = Self.signals[index]
        let frames = samples.count / 2
        let unscreened = Self.meter(samples, screening: false, kernels: kernels)
        #expect(unscreened.filteredFrames == frames)
        for pieceFrames in [1_000, 6_000, 4_096, 13] {
            let screened = Self.meter(samples, pieceFrames: pieceFrames, kernels: kernels)
            #expect(screened.peak.bitPattern == unscreened.peak.bitPattern, "\(name), pieces of \(pieceFrames), \(kernels)")
        }
        let screened = Self.meter(samples, kernels: kernels)
        print("""
            LoudnessTests: true peak of \(name): \(text(20 * log10(Double(screened.peak)))) dBTP; \
            filter ran on \(100 * screened.filteredFrames / frames)% of the frames
            """)
    }

    /// The screening's bound is the filter's gain, not 1: a peak between samples that are all
    /// below the peak so far is still found.
    @Test func aPeakOnlyTheFilterSeesIsFound() {
        let meter = Self.meter(Self.peaksBetweenQuieterSamples())
        let samplePeak = Float(Self.peaksBetweenQuieterSamples().map { abs(Int($0)) }.max()!) / 32_768
        #expect(samplePeak == 0.5)
        #expect(abs(20 * log10(Double(meter.peak) / 0.6)) < 0.2)
    }

    /// The screening earns its keep where the level varies: on music- and speech-like signals the
    /// filter runs on under half the frames.
    @Test func screeningSkipsMostOfMusicAndSpeech() {
        for (name, samples) in Self.signals.prefix(2) {
            #expect(Self.meter(samples).filteredFrames * 2 < samples.count / 2, "\(name)")
        }
    }

    /// The peak does not depend on how the frames are split into calls: the 11 samples the filter
    /// reads before each frame are carried from one call to the next (and the filter's scalar tail
    /// rounds as its vector lanes do), in each build of the loop.
    @Test(arguments: LoudnessKernelChoice.available)
    func historyCarriesAcrossCalls(kernels: LoudnessKernelChoice) {
        let samples = Self.risingNoise(seconds: 0.5)
        let whole = Self.meter(samples, screening: false, pieceFrames: samples.count, kernels: kernels)
        for pieceFrames in [1, 5, 11, 12, 31, 32, 33, 512, 513] {
            #expect(Self.meter(samples, screening: false, pieceFrames: pieceFrames, kernels: kernels).peak.bitPattern
                        == whole.peak.bitPattern, "unscreened, pieces of \(pieceFrames), \(kernels)")
            #expect(Self.meter(samples, pieceFrames: pieceFrames, kernels: kernels).peak.bitPattern == whole.peak.bitPattern,
                    "screened, pieces of \(pieceFrames), \(kernels)")
        }
    }

    /// Sines whose samples miss the crest, as in EBU Tech 3341's true-peak cases: at fs/4 with a
    /// 45° phase every sample is at 0.707 of the crest (−3 dB), at fs/6 60° and fs/8 67.5° less
    /// so. Read within Tech 3341's tolerance, +0.2/−0.4 dB of the crest, where the sample peak is
    /// well below it. (The filter's own gain ripples by ±0.22 dB across the band: fs/6 reads
    /// −0.30 dB, fs/2.5 +0.14.) Each sine fades in over 0.1 s: one that starts at full level is
    /// not band-limited, and its start overshoots (fs/8 at 67.5° by 0.7 dB).
    @Test(arguments: [(4.0, 45.0), (6, 60), (8, 67.5), (4, 0), (5.3, 11), (3, 10), (2.5, 33)])
    func intersamplePeaksOfSinesAreFound(_ divisor: Double, _ phaseDegrees: Double) {
        let crest = 0.5
        let fadeFrames = 4_800.0
        let samples = (0..<48_000).map { frame in
            let fade = Double(frame) < fadeFrames ? 0.5 - 0.5 * cos(.pi * Double(frame) / fadeFrames) : 1
            return Float(fade * crest * sin(2 * .pi * Double(frame) / divisor + phaseDegrees * .pi / 180))
        }
        var meter = TruePeakMeter(channels: 1, sampleRate: 48_000)
        samples.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: $0.count) }
        let error = 20 * log10(Double(meter.peak) / crest)
        let sampleError = 20 * log10(Double(samples.map(abs).max()!) / crest)
        print("""
            LoudnessTests: sine at fs/\(divisor), \(phaseDegrees)°: true peak \(text(error)) dB from the crest, \
            samples \(text(sampleError)) dB
            """)
        #expect(error <= 0.2 && error >= -0.4, "fs/\(divisor), \(phaseDegrees)°: \(error) dB")
    }

    /// Just below 192 kHz the filter still runs and finds a crest between the samples; from
    /// 192 kHz it does not, and the samples alone are the peak (libebur128's choice as well,
    /// `AgreementWithLibEBUR128Tests`).
    @Test(arguments: [(176_400, true), (191_999, true), (192_000, false), (768_000, false)])
    func theFilterRunsBelow192kHzOnly(sampleRate: Int, interpolates: Bool) {
        let crest: Float = 0.5
        // fs/4 at 45°, faded in over 2,000 frames: the samples reach 0.707 of the crest.
        let samples = (0..<20_000).map { frame in
            let fade = frame < 2_000 ? 0.5 - 0.5 * cos(.pi * Double(frame) / 2_000) : 1
            return Float(fade * Double(crest) * sin(.pi * Double(frame) / 2 + .pi / 4))
        }
        var meter = TruePeakMeter(channels: 1, sampleRate: sampleRate)
        samples.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: $0.count) }
        #expect(meter.interpolates == interpolates)
        #expect(meter.samplePeak == samples.map(abs).max()!)
        if interpolates {
            let error = 20 * log10(meter.peak / crest)
            #expect(error <= 0.2 && error >= -0.4, "\(sampleRate) Hz: \(error) dB from the crest")
            #expect(meter.filteredFrames > 0)
        } else {
            #expect(meter.peak == meter.samplePeak)
            #expect(meter.filteredFrames == 0)
        }
    }

    /// An impulse reads as itself: no phase's output reaches it (the largest tap is 0.972), and the
    /// samples themselves count.
    @Test func anImpulseReadsAsItsSample() {
        var samples = [Float](repeating: 0, count: 100)
        samples[50] = -0.75
        var meter = TruePeakMeter(channels: 1, sampleRate: 48_000)
        samples.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: $0.count) }
        #expect(meter.peak == 0.75)
    }

    /// The largest channel decides, whichever it is; each channel is filtered on its own.
    @Test func theLoudestChannelDecides() {
        let channels = 6
        let mono = Self.risingNoise(seconds: 0.5).enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        var alone = TruePeakMeter(channels: 1, sampleRate: 48_000)
        mono.withUnsafeBufferPointer { alone.add($0.baseAddress!, frames: $0.count) }
        for loud in 0..<channels {
            var interleaved = [Int16](repeating: 0, count: mono.count * channels)
            for frame in mono.indices {
                for channel in 0..<channels { interleaved[frame * channels + channel] = channel == loud ? mono[frame] : mono[frame] / 4 }
            }
            var meter = TruePeakMeter(channels: channels, sampleRate: 48_000)
            interleaved.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: mono.count) }
            #expect(meter.peak == alone.peak, "loudest channel \(loud)")
        }
    }

    /// Every sample format is normalised alike (`MeasuredSample`): the same peak from each.
    @Test func formatsMeasureAlike() {
        let samples = Self.risingNoise(seconds: 0.5)
        let reference = Self.meter(samples).peak
        let frames = samples.count / 2
        var s32 = TruePeakMeter(channels: 2, sampleRate: 48_000)
        samples.map { Int32($0) << 16 }.withUnsafeBufferPointer { s32.add($0.baseAddress!, frames: frames) }
        var float = TruePeakMeter(channels: 2, sampleRate: 48_000)
        samples.map { Float($0) / 32_768 }.withUnsafeBufferPointer { float.add($0.baseAddress!, frames: frames) }
        #expect(s32.peak == reference)
        #expect(float.peak == reference)
    }

    /// The folded, interleaved filter (`TruePeakKernel`) finds what the Recommendation's four
    /// phases, written out in `Double` for each channel on its own, find: for 1 to 8 channels with
    /// a different signal in each (odd counts leave a scalar tail), fed whole or in pieces as short
    /// as one frame (the held frames then come from the history), screened or not, in each build.
    @Test(arguments: [1, 2, 3, 5, 6, 8], LoudnessKernelChoice.available)
    func theFoldedFilterFindsWhatThePhasesWrittenOutFind(channels: Int, kernels: LoudnessKernelChoice) {
        let frames = 4_800
        let noise = TestSignal.whiteNoise(seed: UInt64(0xBEEF + channels), peakDBFS: -1, seconds: 0.1 * Double(channels))
        // Channel c: its own stretch of the noise, at its own level, so that any channel can win.
        let levels = (0..<channels).map { 1 / Double(1 + ($0 * 3 + channels) % 4) }
        let samples = (0..<(frames * channels)).map { index in
            Int16((Double(noise[(index % channels) * frames + index / channels]) * levels[index % channels]).rounded())
        }
        var reference = 0.0
        for channel in 0..<channels {
            let x = (0..<frames).map { Double(samples[$0 * channels + channel]) / 32_768 }
            for n in 0..<frames {
                reference = max(reference, abs(x[n]))
                for phase in TruePeakMeter.coefficients {
                    var y = 0.0
                    for k in 0..<phase.count where n - k >= 0 { y += Double(phase[k]) * x[n - k] }
                    reference = max(reference, abs(y))
                }
            }
        }
        for (pieceFrames, screening) in [(frames, false), (1, false), (7, true), (13, false), (32, true), (1_000, true)] {
            var meter = TruePeakMeter(channels: channels, sampleRate: 48_000, screening: screening, kernels: kernels)
            samples.withUnsafeBufferPointer { all in
                var frame = 0
                while frame < frames {
                    let piece = min(pieceFrames, frames - frame)
                    meter.add(all.baseAddress! + channels * frame, frames: piece)
                    frame += piece
                }
            }
            #expect(abs(Double(meter.peak) - reference) <= 2e-6 * reference,
                    "\(channels) channels, pieces of \(pieceFrames), screening \(screening), \(kernels): \(meter.peak) against \(reference)")
        }
    }

    @Test func resetForgetsThePeakAndTheHeldSamples() {
        let loud = Self.risingNoise(seconds: 0.2).reversed().map { $0 }
        let quiet = TestSignal.music(seconds: 0.2).map { $0 / 16 }
        var meter = Self.meter(loud)
        meter.reset()
        #expect(meter.peak == 0)
        quiet.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: $0.count / 2) }
        #expect(meter.peak == Self.meter(quiet, pieceFrames: quiet.count).peak)
    }

    /// The coefficients as BS.1770-4 prints them: multiples of 2^-13, phase 3 phase 0 reversed and
    /// phase 2 phase 1 reversed (a symmetric prototype), each phase passing DC at about unity.
    @Test func coefficientsAreTheRecommendations() {
        let phases = TruePeakMeter.coefficients
        #expect(phases.count == 4 && phases.allSatisfy { $0.count == 12 })
        for phase in phases {
            #expect(phase.allSatisfy { ($0 * 8192).rounded() == $0 * 8192 })
            #expect(abs(phase.reduce(0, +) - 1) < 0.03)
        }
        #expect(phases[3] == phases[0].reversed())
        #expect(phases[2] == phases[1].reversed())
        #expect(phases[0][6] == 0.9721679687500 && phases[1][0] == -0.0291748046875)
        #expect(abs(TruePeakMeter.screeningGain - 2.0228271484375) < 1e-4)
        #expect(TruePeakMeter.screeningGain > 2.0228271484375)
    }
}
