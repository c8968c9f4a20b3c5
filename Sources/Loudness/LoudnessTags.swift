/// The loudness tags a recording carries, as fixed-width text.
///
/// The recorder writes each tag's placeholder into the file's header when the recording starts
/// and overwrites it in place with the measured value when it ends, so every value of a tag has
/// exactly its placeholder's width (the `…Width` constants): whatever the measurement, clamped
/// where it would not fit.
///
/// The forms were chosen against the readers:
/// - `REPLAYGAIN_TRACK_GAIN` has no leading zero, because FFmpeg (libavformat/replaygain.c,
///   `parse_value`, still so in its current source) reads the integer part with
///   `strtol(value, &end, 0)`, base 0, which takes a leading 0 as octal: "+08.50 dB" and
///   "-09.25 dB" read as 0 dB (checked with FFmpeg 5.1's `ashowinfo`). The width stays 9 by giving
///   gains under 10 dB a third decimal: "+8.500 dB", "-12.34 dB".
/// - `R128_TRACK_GAIN` is zero-padded with an explicit sign: "+00123", "-01234". RFC 7845 §5.2.1
///   allows a leading '+' or '-' and leading zeros within 6 characters, and opusfile's
///   `opus_tags_get_gain` (src/info.c, `op_tags_get_track_gain`) skips a '+' and reads decimal
///   digits (no octal). FFmpeg does not read R128 tags at all.
extension LoudnessMeasurement {
    /// ReplayGain 2.0's reference loudness: a track gain brings the track to −18 LUFS.
    public static let replayGainReferenceLoudness = -18.0
    /// RFC 7845 §5.2.1's reference (EBU R128's): an Opus track gain brings the track to −23 LUFS.
    public static let r128ReferenceLoudness = -23.0

    /// Characters of every `replayGainTrackGain` value: sign, digits, point, " dB".
    public static let replayGainTrackGainWidth = 9
    /// Characters of every `replayGainTrackPeak` value: "d.dddddd".
    public static let replayGainTrackPeakWidth = 8
    /// Characters of every `r128TrackGain` value: sign and five digits.
    public static let r128TrackGainWidth = 6

    /// `REPLAYGAIN_TRACK_GAIN` before the recording is measured (and for one with no loudness): 0 dB.
    public static let replayGainTrackGainPlaceholder = "+0.000 dB"
    /// `REPLAYGAIN_TRACK_PEAK` before the recording is measured: 0.
    public static let replayGainTrackPeakPlaceholder = "0.000000"
    /// `R128_TRACK_GAIN` before the recording is measured (and for one with no loudness): 0.
    public static let r128TrackGainPlaceholder = "+00000"

    /// The gain in dB that brings the recording to ReplayGain 2.0's −18 LUFS; nil with no loudness.
    public var replayGainTrackGainDecibels: Double? {
        integratedLoudness.map { Self.replayGainReferenceLoudness - $0 }
    }

    /// `REPLAYGAIN_TRACK_GAIN`: "+8.500 dB" under 10 dB, "-12.34 dB" from 10 dB on, clamped to
    /// ±99.99 dB; the placeholder (0 dB) when there is no loudness. Always 9 characters.
    public var replayGainTrackGain: String {
        guard let gain = replayGainTrackGainDecibels, gain.isFinite else { return Self.replayGainTrackGainPlaceholder }
        let magnitude = min(abs(gain), 99.99)
        let thousandths = UInt64((magnitude * 1000).rounded())
        let sign = gain < 0 && thousandths != 0 ? "-" : "+"
        if thousandths < 10_000 {
            return sign + DecimalText.digits(thousandths, integerDigits: 1, decimals: 3) + " dB"
        }
        // 9.9995 dB and up: two integer digits, two decimals (at most 99.99 after the clamp).
        let hundredths = UInt64((magnitude * 100).rounded())
        return sign + DecimalText.digits(hundredths, integerDigits: 2, decimals: 2) + " dB"
    }

    /// `REPLAYGAIN_TRACK_PEAK`: the true peak, linear, six decimals, clamped to 9.999999
    /// ("0.988553"). Always 8 characters.
    public var replayGainTrackPeak: String {
        let peak = truePeak.isNaN ? 0 : min(max(truePeak, 0), 9.999_999)
        return DecimalText.digits(UInt64((peak * 1_000_000).rounded()), integerDigits: 1, decimals: 6)
    }

    /// The Opus track gain in Q7.8 fixed point (1/256 dB) that brings the recording to −23 LUFS,
    /// clamped to −32768…32767 (about ±128 dB); 0 with no loudness. A player applies it on top of
    /// the ID header's output gain, which hark's Opus encoder leaves at 0, so it is the whole gain.
    public var r128TrackGainQ78: Int {
        guard let loudness = integratedLoudness, loudness.isFinite else { return 0 }
        let q78 = ((Self.r128ReferenceLoudness - loudness) * 256).rounded()
        return Int(min(max(q78, -32768), 32767))
    }

    /// `R128_TRACK_GAIN` (RFC 7845 §5.2.1): `r128TrackGainQ78` as sign and five digits,
    /// "+00123", "-01234", "+00000". Always 6 characters.
    public var r128TrackGain: String {
        let value = r128TrackGainQ78
        let sign = value < 0 ? "-" : "+"
        return sign + DecimalText.digits(UInt64(value.magnitude), integerDigits: 5, decimals: 0)
    }
}
