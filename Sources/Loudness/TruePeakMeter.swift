import LoudnessKernels
#if canImport(LoudnessKernelsAVX2)
import LoudnessKernelsAVX2
#endif

/// The true peak of interleaved audio (ITU-R BS.1770-4 Annex 2): the largest absolute value of
/// the signal oversampled 4× (below 192 kHz; see Rates), and of the samples themselves, over all
/// channels, linear (1.0 is full scale).
///
/// The interpolator is the Recommendation's own: a 48-tap FIR in four phases of 12 taps
/// (`coefficients`), each channel's outputs computed from its own samples, with the 11 frames
/// before each call's first carried across calls (a phase's output at sample n reads samples
/// n−11…n of its channel). BS.1770 also attenuates by 12.04 dB before
/// the filter and adds it back after, so that integer arithmetic cannot overflow; this runs in
/// floating point, where that step changes nothing, so it is left out.
///
/// Cost: the filter runs on the interleaved samples as they come, eight outputs at a time, and
/// folds each mirrored pair of phases into one (`TruePeakKernel`): 24 multiply-adds per sample
/// where the phases written out take 48. It runs only where it could raise the peak (`addFrames`'s
/// screening, which is exact). Measured on the development machine (release build, 48 kHz stereo
/// S16, 125 ms calls, before the folding): 0.10 ms of CPU per second of music-like audio (the
/// filter ran on a third of it), 0.04 ms for speech-like audio with pauses, 0.27 ms where the
/// filter must run everywhere (white noise at a steady level, a level that keeps rising);
/// libebur128's `EBUR128_MODE_TRUE_PEAK`, which hark used before, took 2.1 ms whatever the signal.
/// Filtering the interleaved samples and folding the phases took the whole meter from 0.146 to
/// 0.115 ms per second of music-like stereo with the AVX2 loops and from 0.259 to 0.233 with the
/// portable ones; 5.1 from 0.357 to 0.251 and from 0.726 to 0.632 (`/tmp` harness over these
/// sources, 500 ms calls, best of 5; 2026-11-25).
///
/// Rates: the Recommendation oversamples 48 kHz 4×, to look at the signal every 1/192,000 s. Below
/// `interpolatedRates`' end the same 4× filter runs (its cut-off is the input's Nyquist frequency,
/// so it is a valid interpolator at any rate; from 96 kHz that is finer than 1/192,000 s, where
/// libebur128 oversamples 2×). From 192 kHz the samples themselves are that close together, so
/// the true peak is the sample peak, as libebur128 (`ebur128_init_resampler`: no interpolator from
/// 192 kHz) and FFmpeg's ebur128 filter (which upsamples to 192 kHz) read it. The filter there
/// cost more than the rest of the measurement together: 4.1 ms of CPU per second of 8-channel
/// 192 kHz audio, against 1.7 ms for the K-weighting (release build, sines at a steady level,
/// where screening skips nothing; 2026-11-25).
///
/// Arithmetic: `Float`, as libebur128's interpolator also ran. Samples are normalised as
/// `MeasuredSample` says: 16-bit / 32,768, 32-bit (and S24 shifted into 32 bits) / 2^31, float as
/// is (`LoudnessMeter` has zeroed non-finite ones). The filter's loop is `TruePeakKernel`, built
/// twice (`LoudnessKernelChoice`): portable (SSE2: eight lanes in two registers, a multiply and an
/// add per tap), and for processors with AVX2 and FMA (eight lanes in one register, one fused
/// multiply-add per tap). Folding changes how the outputs round (by a few parts in 10^7), not
/// what they are.
///
/// Memory is allocated in `init`: 768 bytes and 2.1 KiB per channel. `add` and `reset` allocate
/// nothing. Not synchronised: it belongs to its meter's thread.
struct TruePeakMeter: ~Copyable {
    /// Samples of each channel kept from one call to the next: those the filter reads before the
    /// current one.
    static var historyLength: Int { TruePeakKernel.historyLength }
    /// Frames screened at a time (`addFrames`); at least `historyLength`. Smaller chunks skip more
    /// of a signal whose level varies and cost more to screen; 32 measured best of 16…512 (with 16,
    /// music-like audio cost 0.02 ms/s less and noise 0.02 more).
    static let chunkFrames = 32
    /// The most frames filtered in one go: consecutive chunks to filter are gathered up to this.
    static let runFrames = 16 * chunkFrames

    /// ITU-R BS.1770-4 Annex 2, Table 1: the order-48, 4-phase interpolating FIR, phase by phase,
    /// `coefficients[phase][k]` multiplying the sample k before the output's (k = 0 the newest).
    /// Every value is a multiple of 2^-13, exact in `Float`. Transcribed as Google's
    /// loudness_ebur128 has them (github.com/google/loudness_ebur128, `src/ebur128_constants.h`,
    /// `kTruePeakFilterPhase0`…`3`, commit 07619bbc6f1c0499a7204df3a3fde1aeebbb5019). Phase 3 is
    /// phase 0 reversed and phase 2 is phase 1 reversed (the 48-tap prototype is symmetric), so
    /// which end multiplies the newest sample does not change the set of outputs.
    static let coefficients: [[Float]] = [
        [0.0017089843750, 0.0109863281250, -0.0196533203125, 0.0332031250000, -0.0594482421875, 0.1373291015625,
         0.9721679687500, -0.1022949218750, 0.0476074218750, -0.0266113281250, 0.0148925781250, -0.0083007812500],
        [-0.0291748046875, 0.0292968750000, -0.0517578125000, 0.0891113281250, -0.1665039062500, 0.4650878906250,
         0.7797851562500, -0.2003173828125, 0.1015625000000, -0.0582275390625, 0.0330810546875, -0.0189208984375],
        [-0.0189208984375, 0.0330810546875, -0.0582275390625, 0.1015625000000, -0.2003173828125, 0.7797851562500,
         0.4650878906250, -0.1665039062500, 0.0891113281250, -0.0517578125000, 0.0292968750000, -0.0291748046875],
        [-0.0083007812500, 0.0148925781250, -0.0266113281250, 0.0476074218750, -0.1022949218750, 0.9721679687500,
         0.1373291015625, -0.0594482421875, 0.0332031250000, -0.0196533203125, 0.0109863281250, 0.0017089843750],
    ]

    /// The screening gain: the largest phase's L1 norm (L = Σ|h|, 2.023 for phases 1 and 2), raised
    /// by 2^-16 to cover `Float` rounding. The kernel computes max(|y|, |y′|) of a mirrored pair as
    /// |Σ e_k·s_k| + |Σ f_k·d_k| (`TruePeakKernel`), whose exact value is at most L·M. Its
    /// roundings (one in each s_k or d_k, six products summed, the final sum: at most eight in a
    /// row, so the standard bound γ₈ on recursive summation; fused multiply-adds round less often)
    /// add at most γ₈ · Σ (|e_k| + |f_k|)(|x_k| + |x_{11−k}|) ≤ 8·2^-24 · 2.41 · M, about 1.2e-6·M,
    /// where 2.41 is twice Σ max(|h_k|, |h_{11−k}|) over a pair's six taps; the product
    /// `maxAbs × screeningGain` is rounded once more. The margin, 2^-16·L·M (3.1e-5·M), covers both
    /// many times over.
    static let screeningGain: Float = {
        let norms = coefficients.map { phase in phase.reduce(0.0) { $0 + Double(abs($1)) } }
        return Float(norms.max()! * (1 + 1.0 / 65_536))
    }()

    let channels: Int
    /// `TruePeakMeter.screeningGain`, kept here so that `add` does not check a global's lazy
    /// initialisation.
    private let screeningGain = TruePeakMeter.screeningGain
    /// Whether `add` screens chunks (always, but in the tests that compare with an unscreened run).
    let screening: Bool
    /// The rates whose true peak needs the interpolating filter: below 192 kHz.
    static let interpolatedRates = 0..<192_000
    /// Whether the filter runs at all; without it `peak` is the sample peak (see the type's comment).
    let interpolates: Bool
    /// Which build of the filter's loop runs (`LoudnessKernelChoice`).
    let kernels: LoudnessKernelChoice
    /// The folded coefficients (`TruePeakKernel.foldedFilter`), each in all lanes of a vector (so
    /// that the filter's inner loop loads them rather than spreading a scalar across lanes each
    /// time).
    private let filter: UnsafeMutablePointer<SIMD8<Float>>
    /// The last `historyLength` frames added, normalised and interleaved, oldest first; zeros
    /// before the first.
    private let history: UnsafeMutablePointer<Float>
    /// The largest absolute value in `history`.
    private var historyPeak: Float = 0
    /// The frames being filtered, normalised and interleaved: `historyLength` frames before them,
    /// then them.
    private let line: UnsafeMutablePointer<Float>
    /// The true peak so far, over all channels.
    private(set) var peak: Float = 0
    /// The largest absolute sample so far, over all channels (the screening's by-product).
    private(set) var samplePeak: Float = 0
    /// Frames the filter has run on (each in every channel), for the tests to see the screening work.
    private(set) var filteredFrames = 0

    /// A meter for `channels` interleaved channels at `sampleRate` frames a second.
    init(channels: Int, sampleRate: Int, screening: Bool = true, kernels: LoudnessKernelChoice = .fastest) {
        precondition(channels > 0 && sampleRate > 0)
        self.channels = channels
        self.screening = screening
        self.kernels = kernels
        interpolates = Self.interpolatedRates.contains(sampleRate)
        filter = .allocate(capacity: TruePeakKernel.foldedTaps)
        TruePeakKernel.foldedFilter(Self.coefficients, into: filter)
        history = .allocate(capacity: channels * Self.historyLength)
        history.initialize(repeating: 0, count: channels * Self.historyLength)
        line = .allocate(capacity: (Self.historyLength + Self.runFrames) * channels)
        line.initialize(repeating: 0, count: (Self.historyLength + Self.runFrames) * channels)
    }

    deinit {
        filter.deallocate()
        history.deallocate()
        line.deallocate()
    }

    /// Forgets everything measured (the peak and the samples held for the filter). No allocation.
    mutating func reset() {
        history.update(repeating: 0, count: channels * Self.historyLength)
        historyPeak = 0
        peak = 0
        samplePeak = 0
        filteredFrames = 0
    }

    /// Adds `frames` interleaved frames of 16-bit samples.
    mutating func add(_ samples: UnsafePointer<Int16>, frames: Int) { addFrames(samples, frames: frames) }
    /// Adds `frames` interleaved frames of 32-bit samples (S24 shifted into the top three bytes).
    mutating func add(_ samples: UnsafePointer<Int32>, frames: Int) { addFrames(samples, frames: frames) }
    /// Adds `frames` interleaved frames of finite float samples.
    mutating func add(_ samples: UnsafePointer<Float>, frames: Int) { addFrames(samples, frames: frames) }

    // MARK: Internals

    /// Screens chunk after chunk, filters the chunks that could raise the peak, then keeps the
    /// last samples of each channel.
    ///
    /// Screening, and why it never misses a peak: phase p's output at sample n is
    /// y = Σₖ h[p][k]·x[n−k] (k = 0…11), so |y| ≤ Σₖ|h[p][k]| · max |x[n−k]| ≤ L · M, where L is
    /// the largest phase's L1 norm and M the largest |x| among the chunk's samples and the 11
    /// before it, in any channel. `peak` (P) never decreases and already includes every sample
    /// (M of each chunk is added to it first). So when M · L ≤ P, no output of the chunk can exceed
    /// P, and skipping the filter leaves P exactly as running it would. Invariant: at the end of
    /// every call, P is the largest |output| and |sample| over everything added, the same value
    /// (bit for bit) as filtering every chunk gives. (`screeningGain` is L with a margin for the
    /// rounding of the computed outputs, so this holds for the `Float` results too.) M costs one
    /// pass of vector min/max over the interleaved chunk; the filter runs only where the level is
    /// within 6.1 dB (20·log10 L) of the peak so far.
    ///
    /// Chunks to filter are gathered into runs of up to `runFrames` frames and filtered together,
    /// which amortises the filter's set-up where it must run everywhere. A chunk is screened
    /// against P before the pending run's outputs are in it: a smaller P, so at worst a chunk is
    /// filtered that need not have been; never the reverse.
    @inline(__always)
    private mutating func addFrames<Sample: MeasuredSample>(_ samples: UnsafePointer<Sample>, frames: Int) {
        guard frames > 0 else { return }
        guard interpolates else {
            samplePeak = max(samplePeak, Sample.largestMagnitude(samples, count: frames * channels))
            peak = samplePeak
            return
        }
        // The largest |x| of the 11 samples before the chunk: the kept history's for the first
        // chunk, the previous chunk's (a whole chunk, so all 11 are in it) after that.
        var before = historyPeak
        var runStart = -1  // The first frame of the chunks waiting to be filtered; -1 for none.
        var start = 0
        while start < frames {
            let count = min(Self.chunkFrames, frames - start)
            let chunkPeak = Sample.largestMagnitude(samples + start * channels, count: count * channels)
            peak = max(peak, chunkPeak)
            samplePeak = max(samplePeak, chunkPeak)
            if !screening || max(chunkPeak, before) * screeningGain > peak {
                if runStart < 0 {
                    runStart = start
                } else if start - runStart == Self.runFrames {
                    filterFrames(samples, start: runStart, count: start - runStart)
                    runStart = start
                }
            } else if runStart >= 0 {
                filterFrames(samples, start: runStart, count: start - runStart)
                runStart = -1
            }
            before = chunkPeak
            start += count
        }
        if runStart >= 0 { filterFrames(samples, start: runStart, count: frames - runStart) }
        keepHistory(samples, frames: frames)
    }

    /// Runs the filter over frames `start..<start + count` of `samples` (at most `runFrames`), all
    /// channels at once: the kernel filters interleaved audio as it comes.
    @inline(__always)
    private mutating func filterFrames<Sample: MeasuredSample>(_ samples: UnsafePointer<Sample>, start: Int, count: Int) {
        let length = Self.historyLength
        filteredFrames &+= count
        // The 11 frames before the run: from the input where it has them, else the history.
        let fromHistory = max(0, length - start)
        line.update(from: history + (length - fromHistory) * channels, count: fromHistory * channels)
        let fromInput = length - fromHistory
        let first = (start - fromInput) * channels
        let values = (fromInput + count) * channels
        let source = samples + first, destination = line + fromHistory * channels
        for index in 0..<values { destination[index] = Sample.normalised(source[index]) }
        let largest: Float
        switch kernels {
        case .portable:
            largest = TruePeakKernel.largestOutput(line, count: count * channels, stride: channels, filter: filter,
                                                   PortableArithmetic.self)
        case .avx2FMA:
            #if canImport(LoudnessKernelsAVX2)
            largest = AVX2Kernels.truePeakLargestOutput(line, count: count * channels, stride: channels, filter: filter)
            #else
            preconditionFailure("TruePeakMeter: no AVX2 kernels in this build")
            #endif
        }
        peak = max(peak, largest)
    }

    /// Keeps the last `historyLength` frames after `frames` more.
    @inline(__always)
    private mutating func keepHistory<Sample: MeasuredSample>(_ samples: UnsafePointer<Sample>, frames: Int) {
        let kept = Self.historyLength * channels
        let added = min(frames, Self.historyLength) * channels
        // Move the older samples up to make room.
        if added < kept { history.update(from: history + added, count: kept - added) }
        let source = samples + (frames * channels - added), destination = history + (kept - added)
        for index in 0..<added { destination[index] = Sample.normalised(source[index]) }
        var largest: Float = 0
        for index in 0..<kept { largest = max(largest, abs(history[index])) }
        historyPeak = largest
    }
}
