import AudioFormat

/// Measures the loudness of one output file while it is recorded: EBU R128 integrated loudness,
/// loudness range, sample and true peak (ITU-R BS.1770-4), from the same interleaved frames the
/// encoder gets, so the file can be tagged with its gain when it is finished (`LoudnessMeasurement`).
///
/// Integrated loudness and the sample peak are libebur128's (`EBUR128State`); the loudness range
/// is taken from libebur128's 100 ms loudness at 10 Hz (`LoudnessRangeHistogram`, which says why);
/// the true peak is hark's own (`TruePeakMeter`, BS.1770-4's interpolator, run only where it could
/// raise the peak).
///
/// Memory is fixed at `init` (libebur128's histogram mode, the range histogram's 40 KiB, a
/// staging buffer of `stagingFrames` frames, the true-peak meter's 4 KiB; about 0.5 MiB resident
/// in all for 48 kHz stereo, 0.9 MiB for 5.1): `measure` allocates nothing and takes no locks, so
/// the encoder thread can call it once per period however long the recording runs. It costs
/// about 0.9 ms of CPU per second of 48 kHz stereo music- or speech-like audio, 1.1 ms where the
/// true-peak filter must run on every sample (white noise, a steadily rising level), 0.75 ms of
/// it libebur128's (release build, 125 ms periods; 2.9–3.0 ms with libebur128's true peak). 5.1
/// costs 2.2–2.9 ms, mono 0.43–0.54 ms.
///
/// Threads: not synchronised. One thread at a time uses a meter: `measure` is called on one
/// thread (the encoder's), and `measurement`, `reset` and `combined` are called on that thread or
/// after it has been joined. It is `Sendable` so that it can be created on one thread and handed
/// over; the handover (starting or joining the thread) is what orders the accesses. Create meters
/// on the measuring thread, or before it starts (`EBUR128State` explains a libebur128 global).
public final class LoudnessMeter: @unchecked Sendable {
    /// The shape of the frames `measure` takes.
    public let format: PCMFormat
    /// Each channel's BS.1770 weighting, set again after every `reset`; nil keeps libebur128's
    /// default map (more than eight channels with no layout given).
    private let roles: [LoudnessChannelRole]?
    private var state: EBUR128State
    private var range = LoudnessRangeHistogram()
    private var truePeak: TruePeakMeter
    /// Frames measured since `init` or `reset`.
    private var framesMeasured = 0
    /// Frames in one 100 ms step, as libebur128 counts them (`samples_in_100ms`, rounded).
    private let stepFrames: Int
    /// Frames still to add before the current 100 ms step is complete.
    private var framesUntilStep: Int
    /// S24_LE and float frames are copied here before libebur128 sees them (S24 shifted into
    /// 32-bit samples, non-finite floats zeroed), and so are S16/S32 frames whose address is not
    /// aligned for their sample type. `stagingFrames` frames of `format`, 16-byte aligned.
    private let staging: UnsafeMutableRawPointer

    /// Frames the staging buffer holds; longer inputs go through it in chunks. 1,024 frames: 8 KiB
    /// for stereo, 32 KiB for eight channels.
    static let stagingFrames = 1024

    /// A meter for frames of `format`, its channels weighted by the speakers of `layout`.
    ///
    /// Without a layout the channels are taken in WAVE's default order for their count (FL FR;
    /// FL FR FC; quad; 5.0; 5.1 as FL FR FC LFE RL RR, libebur128's own default; 6.1; 7.1), the
    /// order ALSA and WAV deliver them in. `layout` must have `format.channels` positions.
    /// Nil when libebur128 cannot measure the format (more than 64 channels, a rate over
    /// 2,822,400 Hz) or is out of memory. Allocates.
    public init?(format: PCMFormat, layout: ChannelLayout? = nil) {
        if let layout {
            precondition(layout.positions.count == format.channels,
                          "LoudnessMeter: layout \(layout) does not have \(format.channels) channels")
        }
        guard let state = EBUR128State(channels: format.channels, sampleRate: format.sampleRate) else { return nil }
        self.format = format
        self.roles = (layout ?? ChannelLayout.waveDefault(channels: format.channels)).map(LoudnessChannelRole.roles(for:))
        self.state = state
        self.truePeak = TruePeakMeter(channels: format.channels)
        self.stepFrames = (format.sampleRate + 5) / 10
        self.framesUntilStep = stepFrames
        self.staging = .allocate(byteCount: Self.stagingFrames * format.bytesPerFrame, alignment: 16)
        applyRoles()
    }

    deinit { staging.deallocate() }

    /// Adds `frames`, interleaved frames of `format` exactly as captured, to the measurement.
    ///
    /// Real-time safe: no allocation, no locks, no system calls (a malloc-counting build saw none
    /// in 60 s of audio); time proportional to the frames. Traps if `frames` is not a whole number
    /// of frames. Non-finite float samples count as 0: one NaN would otherwise stay in the
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
            // libebur128 and the true-peak meter read these as they are: no copy. (Converting S16
            // once to float for both, `ebur128_add_frames_float` and the meter, measured the
            // same, ±0.02 ms per second of stereo, and would round S32 to 24 bits for libebur128.)
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
    /// channel weighting. Allocates: libebur128 1.2.6 has no way to clear a state, so this
    /// destroys it and creates another (`ebur128_change_parameters` returns early, keeping the
    /// histogram, when the shape is unchanged). Call it on the measuring thread between files,
    /// never per period. Traps if libebur128 is out of memory. A split recording that wants
    /// `combined` at the end keeps one meter per file instead.
    public func reset() {
        guard let fresh = EBUR128State(channels: format.channels, sampleRate: format.sampleRate) else {
            fatalError("LoudnessMeter.reset: libebur128 could not allocate a new measurement")
        }
        state = fresh
        applyRoles()
        range.reset()
        truePeak.reset()
        framesMeasured = 0
        framesUntilStep = stepFrames
    }

    /// What has been measured so far. Read on the measuring thread or after it is joined.
    public var measurement: LoudnessMeasurement {
        let integrated = state.integratedLoudness
        let peaks = self.peaks
        return LoudnessMeasurement(
            integratedLoudness: integrated.isFinite ? integrated : nil,
            loudnessRange: LoudnessRangeHistogram.loudnessRange(of: [range.counts]),
            truePeak: peaks.truePeak, samplePeak: peaks.samplePeak,
            seconds: format.seconds(forFrames: framesMeasured)
        )
    }

    /// The loudness of several meters' audio as one programme: the files of a recording split by
    /// `--split`, measured by one meter each. Integrated loudness pools the meters' gating blocks
    /// (`ebur128_loudness_global_multiple`), the range their short-term values; peaks are the
    /// largest. Blocks that would have straddled a split are not measured, so the result is close
    /// to, not exactly, that of one meter over the whole. No meter may be measuring meanwhile.
    public static func combined(_ meters: [LoudnessMeter]) -> LoudnessMeasurement {
        withExtendedLifetime(meters) {
            let handles = meters.map { $0.state.handle }
            let integrated = EBUR128State.integratedLoudness(of: handles)
            let peaks = meters.map(\.peaks)
            return LoudnessMeasurement(
                integratedLoudness: integrated.isFinite ? integrated : nil,
                loudnessRange: LoudnessRangeHistogram.loudnessRange(of: meters.map { $0.range.counts }),
                truePeak: peaks.map(\.truePeak).max() ?? 0,
                samplePeak: peaks.map(\.samplePeak).max() ?? 0,
                seconds: meters.reduce(0) { $0 + $1.format.seconds(forFrames: $1.framesMeasured) }
            )
        }
    }

    // MARK: Internals

    private func applyRoles() {
        guard let roles else { return }
        for (index, role) in roles.enumerated() {
            state.setRole(role, ofChannel: index)
        }
    }

    /// The largest true and sample peak over all channels, the LFE included.
    private var peaks: (truePeak: Double, samplePeak: Double) {
        var samplePeak = 0.0
        for channel in 0..<format.channels {
            samplePeak = max(samplePeak, state.samplePeak(ofChannel: channel))
        }
        return (Double(truePeak.peak), samplePeak)
    }

    /// Makes the staged samples what libebur128's `int` and `float` entry points (and the
    /// true-peak meter's) take.
    private func prepareStagedSamples(count: Int) {
        switch format.sampleFormat {
        case .s16LE, .s32LE:
            break
        case .s24LE:
            // The low three bytes hold the sample; shifting them to the top drops the container's
            // unspecified top byte and gives a 32-bit sample of the same value relative to full
            // scale (libebur128 divides by 2^31).
            for index in 0..<count {
                let container = Int32(littleEndian: staging.load(fromByteOffset: 4 * index, as: Int32.self))
                staging.storeBytes(of: container &<< 8, toByteOffset: 4 * index, as: Int32.self)
            }
        case .floatLE:
            for index in 0..<count {
                let bits = UInt32(littleEndian: staging.load(fromByteOffset: 4 * index, as: UInt32.self))
                let sample = Float(bitPattern: bits)
                staging.storeBytes(of: sample.isFinite ? sample : 0, toByteOffset: 4 * index, as: Float.self)
            }
        }
    }

    /// Hands aligned samples of `format` (or the staged ones) to the true-peak meter, and to
    /// libebur128 split where each 100 ms step of the stream ends, so that the step's loudness can
    /// be read for the range.
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
            case .s16LE: state.add(start.assumingMemoryBound(to: Int16.self), frames: piece)
            case .s24LE, .s32LE: state.add(start.assumingMemoryBound(to: Int32.self), frames: piece)
            case .floatLE: state.add(start.assumingMemoryBound(to: Float.self), frames: piece)
            }
            done += piece
            framesUntilStep -= piece
            if framesUntilStep == 0 {
                range.addStep(loudness: state.loudness(ofLastMilliseconds: 100))
                framesUntilStep = stepFrames
            }
        }
    }
}
