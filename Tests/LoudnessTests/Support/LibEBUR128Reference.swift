import CEBUR128

/// libebur128 as a reference meter for hark's own (`LoudnessMeter`), which measured with it until
/// 2026-11-24. Every libebur128 call in the project is in this file.
///
/// The mode is libebur128's exact one: integrated loudness over a list of every 400 ms gating
/// block (`EBUR128_MODE_I` without `_HISTOGRAM`, which `malloc`s a list entry per block, fine in a
/// test) and the sample peak. Channels take libebur128's default map (L, R, C, LFE left out, Ls,
/// Rs), which is hark's for one, two and six channels.
///
/// libebur128 1.2.6 (Debian 12's `libebur128-1 1.2.6-1+b1`) runs the K-weighting as one
/// fourth-order filter (the two stages' product) in `double`; hark runs the two stages one after
/// the other. The same filter, so a 400 ms block agrees to rounding (5e-9 LU at 48 kHz, 3e-6 LU at
/// 192 kHz).
final class LibEBUR128Reference {
    private let handle: UnsafeMutablePointer<ebur128_state>

    static let mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_SAMPLE_PEAK.rawValue)

    /// With `truePeak`, libebur128 also measures the true peak (`EBUR128_MODE_TRUE_PEAK`: its own
    /// interpolator, 4× below 96 kHz, 2× below 192 kHz, none from there).
    init?(channels: Int, sampleRate: Int, truePeak: Bool = false) {
        let mode = Self.mode | (truePeak ? Int32(EBUR128_MODE_TRUE_PEAK.rawValue) : 0)
        guard channels > 0, sampleRate > 0,
              let handle = ebur128_init(UInt32(channels), UInt(sampleRate), mode)
        else { return nil }
        self.handle = handle
    }

    deinit {
        var pointer: UnsafeMutablePointer<ebur128_state>? = handle
        ebur128_destroy(&pointer)
    }

    /// Adds interleaved 16-bit frames (full scale 32,768).
    func add(_ samples: UnsafePointer<Int16>, frames: Int) {
        let result = ebur128_add_frames_short(handle, samples, frames)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_add_frames_short failed: \(result)")
    }

    /// Integrated loudness in LUFS; nil when no block passed the gates.
    var integratedLoudness: Double? {
        var value = -Double.infinity
        _ = ebur128_loudness_global(handle, &value)
        return value.isFinite ? value : nil
    }

    /// The largest true peak over all channels, linear (made with `truePeak`).
    var truePeak: Double {
        var largest = 0.0
        for channel in 0..<Int(handle.pointee.channels) {
            var value = 0.0
            let result = ebur128_true_peak(handle, UInt32(channel), &value)
            precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_true_peak failed: \(result)")
            largest = max(largest, value)
        }
        return largest
    }

    /// The largest absolute sample over all channels, linear.
    var samplePeak: Double {
        var largest = 0.0
        for channel in 0..<Int(handle.pointee.channels) {
            var value = 0.0
            _ = ebur128_sample_peak(handle, UInt32(channel), &value)
            largest = max(largest, value)
        }
        return largest
    }
}
