#if canImport(Glibc)
import Glibc
#endif

/// What a `LoudnessMeter` measured of a recording (EBU R128 / ITU-R BS.1770-4): its integrated
/// loudness, loudness range and peaks. A value: copied out of the meter, safe to pass anywhere.
///
/// Invariants: `truePeak >= samplePeak >= 0`, both linear with 1.0 at digital full scale (a true
/// peak may exceed 1.0); `loudnessRange` is non-nil only when `integratedLoudness` is.
///
/// Integrated loudness is that of an unbinned computation but for the blocks within 0.05 LU of the
/// relative gate, each of which can move it by about 3.9 / (n − 1) LU for n blocks gated in
/// (`GatingBlockHistogram`; EBU Tech 3341 allows ±0.1 LU). The range is within 0.01 LU
/// (`LoudnessRangeHistogram`).
public struct LoudnessMeasurement: Sendable, Equatable {
    /// Gated integrated loudness in LUFS (BS.1770-4 §5.1: 400 ms blocks, absolute gate −70 LUFS,
    /// relative gate −10 LU). Nil when no block passed the gates: silence, or under 400 ms.
    public var integratedLoudness: Double?
    /// Loudness range in LU (EBU Tech 3342: the spread between the 10th and 95th percentiles of
    /// the gated 3 s short-term loudness, taken every 100 ms). Nil when it is undefined: under
    /// 3 s of audio, or no short-term value or no integrated loudness passed the gates.
    public var loudnessRange: Double?
    /// The largest true peak over all channels, linear: the largest absolute value of the signal
    /// oversampled 4× by BS.1770-4's interpolator, or of a sample, whichever is larger
    /// (`TruePeakMeter`).
    public var truePeak: Double
    /// The largest absolute sample over all channels, linear.
    public var samplePeak: Double
    /// Seconds of audio measured.
    public var seconds: Double

    public init(integratedLoudness: Double?, loudnessRange: Double?, truePeak: Double, samplePeak: Double,
                seconds: Double) {
        self.integratedLoudness = integratedLoudness
        self.loudnessRange = integratedLoudness == nil ? nil : loudnessRange
        self.samplePeak = max(0, samplePeak)
        self.truePeak = max(self.samplePeak, truePeak)
        self.seconds = seconds
    }

    /// The true peak in dBTP (decibels relative to full scale, true peak); nil for a zero peak.
    public var truePeakDBTP: Double? { Self.decibels(truePeak) }

    /// The sample peak in dBFS; nil for a zero peak.
    public var samplePeakDBFS: Double? { Self.decibels(samplePeak) }

    /// One short phrase for a recording's one-line summary:
    /// "-23.0 LUFS, range 4.2 LU, true peak -1.3 dBTP"; without the range under 3 s; and
    /// "loudness unmeasured (silence or under 0.4 s)" when nothing passed the gates (with the true
    /// peak, when there is one, so a barely open microphone shows).
    public var summaryText: String {
        let peak = truePeakDBTP.map { "true peak \(DecimalText.fixed($0, decimals: 1)) dBTP" }
        guard let integrated = integratedLoudness else {
            return ["loudness unmeasured (silence or under 0.4 s)", peak].compactMap { $0 }.joined(separator: ", ")
        }
        let range = loudnessRange.map { "range \(DecimalText.fixed($0, decimals: 1)) LU" }
        return ["\(DecimalText.fixed(integrated, decimals: 1)) LUFS", range, peak].compactMap { $0 }.joined(separator: ", ")
    }

    /// The numbers for a JSON access log, in a fixed order, rounded to 0.01; nil where there is
    /// no value (no loudness, no range, a zero peak), which a log writes as `null` or leaves out.
    /// Keys: `loudnessLUFS`, `loudnessRangeLU`, `truePeakDBTP`, `samplePeakDBFS`.
    public var logFields: [(key: String, value: Double?)] {
        func rounded(_ value: Double?) -> Double? { value.map { ($0 * 100).rounded() / 100 } }
        return [
            ("loudnessLUFS", rounded(integratedLoudness)),
            ("loudnessRangeLU", rounded(loudnessRange)),
            ("truePeakDBTP", rounded(truePeakDBTP)),
            ("samplePeakDBFS", rounded(samplePeakDBFS)),
        ]
    }

    static func decibels(_ linear: Double) -> Double? {
        linear > 0 ? 20 * log10(linear) : nil
    }
}

/// Decimal text of a `Double` without Foundation's `String(format:)` (which would bring in
/// Foundation): rounded half away from zero, no "-0.0".
enum DecimalText {
    /// `value` with exactly `decimals` digits after the point ("−23.0", "4.2", "0.0").
    static func fixed(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : value < 0 ? "-inf" : "inf" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        // Past 2^62 units the value is not a measurement: clamped so the conversion cannot trap.
        let scaled = Int64(min((abs(value) * scale).rounded(), 4.6e18))
        let sign = value < 0 && scaled != 0 ? "-" : ""
        return sign + digits(UInt64(scaled), integerDigits: 1, decimals: decimals)
    }

    /// `units` (a count of 10^-`decimals`) as "integer.fraction", the integer part zero-padded to
    /// at least `integerDigits` digits.
    static func digits(_ units: UInt64, integerDigits: Int, decimals: Int) -> String {
        var divisor: UInt64 = 1
        for _ in 0..<decimals { divisor *= 10 }
        var integer = String(units / divisor)
        while integer.count < integerDigits { integer = "0" + integer }
        guard decimals > 0 else { return integer }
        var fraction = String(units % divisor)
        while fraction.count < decimals { fraction = "0" + fraction }
        return integer + "." + fraction
    }
}
