import CEBUR128

/// One libebur128 measurement (`ebur128_state *`), owned: created in `init`, destroyed in
/// `deinit`. Every libebur128 call hark makes is in this file.
///
/// The mode is fixed (`mode`): integrated loudness and sample peak, in histogram mode.
/// Histogram mode is what keeps memory constant and the `add` calls free of `malloc`: without
/// it libebur128 appends every 400 ms gating block to a linked list (`ebur128_calc_gating_block`
/// `malloc`s a `struct ebur128_dq_entry` for each, 36,000 an hour, until
/// `ebur128_set_max_history`'s limit), while with it each block only increments one bin of a
/// fixed 1,000-bin histogram allocated in `ebur128_init`. The rest of `ebur128_add_frames_*`
/// (the K-weighting filter, the sample-peak maxima) and
/// `ebur128_loudness_window` write and read only buffers `ebur128_init` allocated. Checked in
/// libebur128 1.2.6's `ebur128/ebur128.c` (Debian 12's `libebur128-1 1.2.6-1+b1`).
///
/// Loudness range is not libebur128's (`LoudnessRangeHistogram` says why), so the mode leaves out
/// `EBUR128_MODE_LRA`, and with it the 3 s audio buffer that mode keeps: 1.8 MiB resident for
/// 48 kHz stereo, 5.6 MiB for 5.1 (measured: a whole `LoudnessMeter` was then 0.75 and 1.7 MiB,
/// against 2.5 and 7.3 MiB for a libebur128 state with `EBUR128_MODE_LRA`; without libebur128's
/// true peak too, 0.5 and 0.9 MiB).
///
/// The true peak is not libebur128's (`TruePeakMeter`): its `EBUR128_MODE_TRUE_PEAK` oversampled
/// every sample of every channel (a 49-tap filter, 4×), 2.1 ms of CPU per second of 48 kHz stereo
/// of the 2.9 ms this state then cost (2 cores, release build, 125 ms periods). Without it, in
/// this mode, libebur128 costs about 0.75 ms per second of 48 kHz stereo.
///
/// The price of the histogram: a block's energy counts as the centre of its 0.1 LU bin, so
/// integrated loudness can differ from an exact computation by up to 0.05 LU.
///
/// Threads: one state is used by one thread at a time. libebur128 also keeps process-wide tables
/// (`histogram_energies`, `histogram_energy_boundaries`) that *every* `ebur128_init` rewrites,
/// with the same values each time, while `add` and the loudness queries of any other state read
/// them. Creating a state on one thread while another measures is therefore formally a data race
/// (ThreadSanitizer would say so), though on identical values; hark creates meters on the thread
/// that measures with them, or before that thread starts.
struct EBUR128State: ~Copyable {
    /// The state libebur128 allocated. Valid until `deinit`; never shared with another owner.
    let handle: UnsafeMutablePointer<ebur128_state>

    /// `EBUR128_MODE_I | _SAMPLE_PEAK | _HISTOGRAM`. (`_SAMPLE_PEAK` includes momentary loudness,
    /// whose 400 ms buffer `loudness(ofLastMilliseconds:)` reads.) Not `_TRUE_PEAK`: the true peak
    /// is hark's own (`TruePeakMeter`).
    static let mode = Int32(
        EBUR128_MODE_I.rawValue | EBUR128_MODE_SAMPLE_PEAK.rawValue | EBUR128_MODE_HISTOGRAM.rawValue
    )

    /// A new measurement with libebur128's default channel map (see `setRole`). Nil when
    /// libebur128 refuses the shape (no channels or more than 64, a rate under 16 Hz or over
    /// 2,822,400 Hz) or is out of memory. Allocates.
    /// The corresponding C function is `ebur128_init`.
    init?(channels: Int, sampleRate: Int) {
        guard channels > 0, channels <= Int(UInt32.max), sampleRate > 0,
              let handle = ebur128_init(UInt32(channels), UInt(sampleRate), Self.mode)
        else { return nil }
        self.handle = handle
    }

    /// The corresponding C function is `ebur128_destroy`.
    deinit {
        var pointer: UnsafeMutablePointer<ebur128_state>? = handle
        ebur128_destroy(&pointer)
    }

    /// Says which speaker channel `index` feeds, which decides its BS.1770 weight.
    ///
    /// Without a call, libebur128's default applies (`ebur128_init_channel_map`): for four
    /// channels L, R, Ls, Rs; for five L, R, C, Ls, Rs; otherwise L, R, C, unused (the LFE),
    /// Ls, Rs, and every further channel unused.
    /// The corresponding C function is `ebur128_set_channel`.
    func setRole(_ role: LoudnessChannelRole, ofChannel index: Int) {
        let value: channel = switch role {
        case .ignored: EBUR128_UNUSED
        case .left: EBUR128_LEFT
        case .right: EBUR128_RIGHT
        case .center: EBUR128_CENTER
        case .leftOfCenter: EBUR128_MpSC
        case .rightOfCenter: EBUR128_MmSC
        case .leftSurround: EBUR128_LEFT_SURROUND
        case .rightSurround: EBUR128_RIGHT_SURROUND
        case .leftSide: EBUR128_Mp090
        case .rightSide: EBUR128_Mm090
        case .leftBack: EBUR128_Mp135
        case .rightBack: EBUR128_Mm135
        case .backCenter: EBUR128_Mp180
        }
        // Fails only for an index past the channel count, which the caller never passes.
        let result = ebur128_set_channel(handle, UInt32(index), Int32(value.rawValue))
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_set_channel(\(index)) failed: \(result)")
    }

    // MARK: Adding audio (no allocation, no locks: see the type's comment)

    /// Adds `frames` interleaved frames of 16-bit samples (full scale 32,768).
    /// The corresponding C function is `ebur128_add_frames_short`.
    func add(_ samples: UnsafePointer<Int16>, frames: Int) {
        // In histogram mode the only failure, EBUR128_ERROR_NOMEM, cannot happen.
        _ = ebur128_add_frames_short(handle, samples, frames)
    }

    /// Adds `frames` interleaved frames of 32-bit samples (full scale 2^31).
    /// The corresponding C function is `ebur128_add_frames_int`.
    func add(_ samples: UnsafePointer<Int32>, frames: Int) {
        _ = ebur128_add_frames_int(handle, samples, frames)
    }

    /// Adds `frames` interleaved frames of float samples (full scale 1.0).
    /// The corresponding C function is `ebur128_add_frames_float`.
    func add(_ samples: UnsafePointer<Float>, frames: Int) {
        _ = ebur128_add_frames_float(handle, samples, frames)
    }

    // MARK: Results (no allocation)

    /// Integrated loudness in LUFS; −∞ when no 400 ms block passed the gates.
    /// The corresponding C function is `ebur128_loudness_global`.
    var integratedLoudness: Double {
        var value = -Double.infinity
        _ = ebur128_loudness_global(handle, &value)
        return value
    }

    /// The K-weighted, channel-weighted loudness of the last `milliseconds` of audio added (at
    /// most 400), in LUFS; −∞ for silence. `milliseconds × rate / 1000` frames, truncated.
    /// The corresponding C function is `ebur128_loudness_window`.
    func loudness(ofLastMilliseconds milliseconds: Int) -> Double {
        var value = -Double.infinity
        let result = ebur128_loudness_window(handle, UInt(milliseconds), &value)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_loudness_window(\(milliseconds)) failed: \(result)")
        return value
    }

    /// The largest absolute sample of channel `index` so far, linear (1.0 is full scale).
    /// The corresponding C function is `ebur128_sample_peak`.
    func samplePeak(ofChannel index: Int) -> Double {
        var value = 0.0
        _ = ebur128_sample_peak(handle, UInt32(index), &value)
        return value
    }

    // MARK: Several states as one

    /// Integrated loudness of several measurements taken as one programme (their gating-block
    /// histograms pooled), −∞ when none passed the gates. `handles` must all be alive and idle.
    /// The corresponding C function is `ebur128_loudness_global_multiple`.
    static func integratedLoudness(of handles: [UnsafeMutablePointer<ebur128_state>]) -> Double {
        var states = handles.map { Optional($0) }
        var value = -Double.infinity
        _ = ebur128_loudness_global_multiple(&states, states.count, &value)
        return value
    }
}
