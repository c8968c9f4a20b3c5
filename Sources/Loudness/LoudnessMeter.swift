import AudioFormat

/// Measures the loudness of one output file while it is recorded: EBU R128 integrated loudness,
/// loudness range, sample and true peak (ITU-R BS.1770-4), from the same interleaved frames the
/// encoder gets, so the file can be tagged with its gain when it is finished (`LoudnessMeasurement`).
///
/// How: every sample goes through BS.1770's K-weighting (`KWeightingFilter`); every 100 ms of the
/// stream the channels' mean squares, weighted by their speaker, make one step energy; four steps
/// make a 400 ms gating block for the integrated loudness (`GatingBlockHistogram`), thirty a 3 s
/// short-term value for the loudness range (`LoudnessRangeHistogram`). The true peak is
/// `TruePeakMeter`'s (BS.1770-4's interpolator, run only where it could raise the peak), the
/// sample peak a by-product of its screening. All of it is hark's own Swift: libebur128, which
/// measured integrated loudness and the sample peak until 2026-11-24, stays as the tests' reference
/// (`LibEBUR128Reference` there); `KWeightingFilter` says why.
///
/// Memory is fixed at `init` (the two histograms' 52 KiB, a staging buffer of `stagingFrames`
/// frames, the true-peak meter's 4 KiB, the filter's 56 bytes per lane): `measure`
/// allocates nothing and takes no locks, so the encoder thread can call it once per period however
/// long the recording runs. With the portable loops it costs about 0.23 ms of CPU per second of
/// 48 kHz stereo music-like audio (release build, 500 ms calls) and 2.4 ms per second of eight
/// channels at 192 kHz S32, where the samples are the true peak (`TruePeakMeter`); with the loops
/// built for AVX2 and FMA, where the processor has them (`LoudnessKernelChoice`), 0.12 and
/// 0.77 ms (2026-11-25; docs/performance.md).
///
/// Threads: not synchronised. One thread at a time uses a meter: `measure` is called on one
/// thread (the encoder's), and `measurement`, `reset` and `combined` are called on that thread or
/// after it has been joined. It is `Sendable` so that it can be created on one thread and handed
/// over; the handover (starting or joining the thread) is what orders the accesses.
public final class LoudnessMeter: @unchecked Sendable {
    /// The shape of the frames `measure` takes.
    public let format: PCMFormat
    /// Each channel's BS.1770 weight (`LoudnessChannelRole.weight`), `format.channels` values.
    private let weights: UnsafeMutablePointer<Double>
    private var filter: KWeightingFilter
    private var blocks = GatingBlockHistogram()
    private var range = LoudnessRangeHistogram()
    private var truePeak: TruePeakMeter
    /// Frames measured since `init` or `reset`.
    private var framesMeasured = 0
    /// Frames in one 100 ms step, rounded as libebur128 and FFmpeg round it.
    private let stepFrames: Int
    /// Frames still to add before the current 100 ms step is complete.
    private var framesUntilStep: Int
    /// S24_LE and float frames are copied here before they are measured (S24 shifted into 32-bit
    /// samples, floats brought into `floatLimit`), and so are S16/S32 frames whose address is not
    /// aligned for their sample type. `stagingFrames` frames of `format`, 16-byte aligned.
    private let staging: UnsafeMutableRawPointer

    /// Frames the staging buffer holds; longer inputs go through it in chunks. 1,024 frames: 8 KiB
    /// for stereo, 32 KiB for eight channels.
    static let stagingFrames = 1024

    /// The largest float sample magnitude measured as it is, when the file keeps floats as they
    /// are (WAV, raw): 10^6, +120 dBFS, past anything a microphone or a mix delivers. Larger ones
    /// are measured as ±10^6, so the K-weighting's state and the sums of squares, in `Float`,
    /// stay finite: two samples of 2·10^38 made them infinite, the figures NaN, and writing
    /// them into the header stopped hark.
    public static let largestMeasuredFloat: Float = 1_000_000
    /// Float samples are measured within ±this: 1 where the file stores them clipped to full
    /// scale (FLAC stores 24-bit, Opus takes [-1, 1]), so the figures are the file's; else
    /// `largestMeasuredFloat`.
    private let floatLimit: Float

    /// The most channels a meter measures (as libebur128 allowed).
    public static let maximumChannels = 64
    /// The rates a meter measures: from where the K-weighting's shelf lies below Nyquist to
    /// libebur128's highest.
    public static let sampleRates = KWeightingFilter.lowestSampleRate...2_822_400

    /// A meter for frames of `format`, its channels weighted by the speakers of `layout`.
    ///
    /// Without a layout the channels are taken in WAVE's default order for their count (FL FR;
    /// FL FR FC; quad; 5.0; 5.1 as FL FR FC LFE RL RR; 6.1; 7.1), the order ALSA and WAV deliver
    /// them in; past eight, as `LoudnessChannelRole.rolesWithoutLayout` says. `layout` must have
    /// `format.channels` positions. Nil for more than `maximumChannels` channels or a rate outside
    /// `sampleRates`. `kernels` is the build of the inner loops to run (`LoudnessKernelChoice`;
    /// the tests compare them). `clipsFloats`: the file stores float samples clipped to full scale
    /// (FLAC, Opus), so they are measured so. Allocates.
    public init?(format: PCMFormat, layout: ChannelLayout? = nil, clipsFloats: Bool = false,
                 kernels: LoudnessKernelChoice = .fastest) {
        // A build this processor cannot run would stop it with SIGILL at the first `measure`.
        precondition(LoudnessKernelChoice.available.contains(kernels), "LoudnessMeter: \(kernels) loops do not run here")
        if let layout {
            precondition(layout.positions.count == format.channels,
                          "LoudnessMeter: layout \(layout) does not have \(format.channels) channels")
        }
        guard format.channels <= Self.maximumChannels, Self.sampleRates.contains(format.sampleRate) else { return nil }
        self.format = format
        floatLimit = clipsFloats ? 1 : Self.largestMeasuredFloat
        let roles = (layout ?? ChannelLayout.waveDefault(channels: format.channels)).map(LoudnessChannelRole.roles(for:))
            ?? LoudnessChannelRole.rolesWithoutLayout(channels: format.channels)
        weights = .allocate(capacity: format.channels)
        weights.initialize(from: roles.map(\.weight), count: format.channels)
        filter = KWeightingFilter(channels: format.channels, sampleRate: format.sampleRate, kernels: kernels)
        truePeak = TruePeakMeter(channels: format.channels, sampleRate: format.sampleRate, kernels: kernels)
        stepFrames = (format.sampleRate + 5) / 10
        framesUntilStep = stepFrames
        staging = .allocate(byteCount: Self.stagingFrames * format.bytesPerFrame, alignment: 16)
    }

    deinit {
        staging.deallocate()
        weights.deallocate()
    }

    /// Adds `frames`, interleaved frames of `format` exactly as captured, to the measurement.
    ///
    /// Real-time safe: no allocation, no locks, no system calls (a malloc-counting build saw none
    /// in 60 s of audio); time proportional to the frames. Traps if `frames` is not a whole number
    /// of frames. Float samples are measured within the meter's limit (±1 for a file that clips
    /// them, else `largestMeasuredFloat`), NaN as 0: one NaN or ∞ would otherwise stay in the
    /// K-weighting filter's state and void the rest of the measurement.
    public func measure(_ frames: UnsafeRawBufferPointer) {
        let bytesPerFrame = format.bytesPerFrame
        precondition(frames.count % bytesPerFrame == 0,
                     "LoudnessMeter.measure: \(frames.count) bytes is not whole \(bytesPerFrame)-byte frames")
        let frameCount = frames.count / bytesPerFrame
        guard frameCount > 0, let source = frames.baseAddress else { return }
        framesMeasured += frameCount
        let sampleFormat = format.sampleFormat
        if sampleFormat == .s16LE || sampleFormat == .s32LE,
           Int(bitPattern: source) % sampleFormat.bytesPerSample == 0 {
            // The filters read these as they are: no copy.
            add(source, frames: frameCount)
            return
        }
        var done = 0
        while done < frameCount {
            let chunk = min(Self.stagingFrames, frameCount - done)
            staging.copyMemory(from: source + done * bytesPerFrame, byteCount: chunk * bytesPerFrame)
            prepareStagedSamples(count: chunk * format.channels)
            add(UnsafeRawPointer(staging), frames: chunk)
            done += chunk
        }
    }

    /// Starts a new measurement (the next file of a split recording), with the same format and
    /// channel weighting. No allocation. A split recording that wants `combined` at the end keeps
    /// one meter per file instead.
    public func reset() {
        filter.reset()
        blocks.reset()
        range.reset()
        truePeak.reset()
        framesMeasured = 0
        framesUntilStep = stepFrames
    }

    /// What has been measured so far. Read on the measuring thread or after it is joined.
    public var measurement: LoudnessMeasurement {
        LoudnessMeasurement(
            integratedLoudness: GatingBlockHistogram.integratedLoudness(of: [blocks.blocks]),
            loudnessRange: LoudnessRangeHistogram.loudnessRange(of: [range.counts]),
            truePeak: Double(truePeak.peak), samplePeak: Double(truePeak.samplePeak),
            seconds: format.seconds(forFrames: framesMeasured)
        )
    }

    /// The loudness of several meters' audio as one programme: the files of a recording split by
    /// `--split`, measured by one meter each. Integrated loudness pools the meters' gating blocks,
    /// the range their short-term values; peaks are the
    /// largest. Blocks that would have straddled a split are not measured, so the result is close
    /// to, not exactly, that of one meter over the whole. No meter may be measuring meanwhile.
    public static func combined(_ meters: [LoudnessMeter]) -> LoudnessMeasurement {
        withExtendedLifetime(meters) {
            LoudnessMeasurement(
                integratedLoudness: GatingBlockHistogram.integratedLoudness(of: meters.map { $0.blocks.blocks }),
                loudnessRange: LoudnessRangeHistogram.loudnessRange(of: meters.map { $0.range.counts }),
                truePeak: Double(meters.map { $0.truePeak.peak }.max() ?? 0),
                samplePeak: Double(meters.map { $0.truePeak.samplePeak }.max() ?? 0),
                seconds: meters.reduce(0) { $0 + $1.format.seconds(forFrames: $1.framesMeasured) }
            )
        }
    }

    // MARK: Internals

    /// Makes the staged samples what the filters take: 32-bit integers or finite floats.
    private func prepareStagedSamples(count: Int) {
        switch format.sampleFormat {
        case .s16LE, .s32LE:
            break
        case .s24LE:
            // The low three bytes hold the sample; shifting them to the top drops the container's
            // unspecified top byte and gives a 32-bit sample of the same value relative to full
            // scale (divided by 2^31).
            for index in 0..<count {
                let container = Int32(littleEndian: staging.load(fromByteOffset: 4 * index, as: Int32.self))
                staging.storeBytes(of: container &<< 8, toByteOffset: 4 * index, as: Int32.self)
            }
        case .floatLE:
            for index in 0..<count {
                let bits = UInt32(littleEndian: staging.load(fromByteOffset: 4 * index, as: UInt32.self))
                let sample = Float(bitPattern: bits)
                // NaN is silence (FLAC and Opus store it so); ±∞ the limit (they store full scale).
                let measured = sample.isNaN ? 0 : Swift.min(Swift.max(sample, -floatLimit), floatLimit)
                staging.storeBytes(of: measured, toByteOffset: 4 * index, as: Float.self)
            }
        }
    }

    /// Hands aligned samples of `format` (or the staged ones) to the true-peak meter, and to the
    /// K-weighting split where each 100 ms step of the stream ends.
    private func add(_ samples: UnsafeRawPointer, frames: Int) {
        switch format.sampleFormat {
        case .s16LE: truePeak.add(samples.assumingMemoryBound(to: Int16.self), frames: frames)
        case .s24LE, .s32LE: truePeak.add(samples.assumingMemoryBound(to: Int32.self), frames: frames)
        case .floatLE: truePeak.add(samples.assumingMemoryBound(to: Float.self), frames: frames)
        }
        var done = 0
        while done < frames {
            let piece = min(frames - done, framesUntilStep)
            let start = samples + done * format.bytesPerFrame
            switch format.sampleFormat {
            case .s16LE: filter.add(start.assumingMemoryBound(to: Int16.self), frames: piece)
            case .s24LE, .s32LE: filter.add(start.assumingMemoryBound(to: Int32.self), frames: piece)
            case .floatLE: filter.add(start.assumingMemoryBound(to: Float.self), frames: piece)
            }
            done += piece
            framesUntilStep -= piece
            if framesUntilStep == 0 {
                let energy = filter.takeWeightedSum(weights: weights) / Double(stepFrames)
                blocks.addStep(energy: energy)
                range.addStep(energy: energy)
                framesUntilStep = stepFrames
            }
        }
    }
}
