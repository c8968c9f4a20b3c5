import Capture
import Encoding
import RecordPermission

/// The tags hark writes on its own, after the user's:
///
/// - `DATE`: when the recording started, in local time with the UTC offset
///   (`2026-11-22T14:03:05+01:00`; see `WallClockTime.localISO8601`);
/// - `ENCODER`: hark's version and the codec library's, e.g. `hark 0.1.0 (libFLAC 1.4.2)`;
/// - `HARK_CAPTURE`: what the device negotiated (`captureDescription(of:)`);
/// - for a file, `HARK_FIRST_SAMPLE_TIME` and `HARK_CLOCK_DRIFT_PPM` (`ClockStamp`): placeholders
///   of the values' width, written over when the recording ends, since neither is known when the
///   header is written (a file that keeps them was never finished); `HARK_FIRST_SAMPLE`, the
///   file's first sample's number, known when the file starts.
/// - for a file, its loudness: `REPLAYGAIN_TRACK_GAIN` and `REPLAYGAIN_TRACK_PEAK` (FLAC) or
///   `R128_TRACK_GAIN` (Opus), placeholders written over when the recording ends (`LoudnessStamp`).
///
/// A key the user set (with `--tag` or a shorthand such as `--title`) is never added again, so
/// the user's value wins and no key appears twice because of hark. Without the recording details
/// (`--no-auto-tags`), DATE and HARK_CAPTURE are left out: they say when and on which device
/// something was recorded, which a shared file need not tell. ENCODER stays: it describes the file,
/// not the recording, and the vendor strings of both formats name the codec library anyway.
struct AutomaticTags {
    /// ENCODER's value.
    let encoderName: String
    /// DATE's moment and HARK_CAPTURE's parameters; nil leaves both out.
    let recordingDetails: (start: WallClockTime, capture: NegotiatedCapture)?
    /// Whether to reserve the clock tags (a file, with the recording details).
    var reservesClockTags = false
    /// The file's first sample's number in the recording: known when the file starts, so written
    /// at once (a killed split's finished parts can still be placed), unlike the time and drift.
    var firstSampleNumber = 0
    /// Loudness tags to reserve, with their placeholders (a file; see `LoudnessStamp`). Kept with
    /// `--no-auto-tags`: they describe the audio, not where or when it was recorded.
    var loudnessPlaceholders: [(key: String, value: String)] = []

    /// `user`'s tags in their order, then DATE, ENCODER and HARK_CAPTURE where `user` lacks them.
    func appended(to user: StreamTags) -> StreamTags {
        var tags = user
        var automatic: [(key: String, value: String)] = []
        if let recordingDetails, let date = recordingDetails.start.localISO8601 {
            automatic.append(("DATE", date))
        }
        automatic.append(("ENCODER", encoderName))
        if let recordingDetails {
            automatic.append(("HARK_CAPTURE", Self.captureDescription(of: recordingDetails.capture)))
            if reservesClockTags {
                automatic.append((ClockStamp.timeKey, ClockStamp.timePlaceholder))
                automatic.append((ClockStamp.sampleKey, ClockStamp.sampleText(firstSampleNumber)))
                automatic.append((ClockStamp.driftKey, ClockStamp.driftPlaceholder))
            }
        }
        automatic += loudnessPlaceholders
        for (key, value) in automatic where !user.contains(key: key) {
            tags.add(key, value)
        }
        return tags
    }

    /// HARK_CAPTURE's value, e.g.
    /// `format=S16_LE rate=48000 channels=2 period_frames=6000 buffer_frames=24000 device=hw:1,0`.
    ///
    /// Space-separated `name=value` fields in this order; period and buffer in frames, ALSA's own
    /// unit, because microseconds are rounded at rates such as 44.1 kHz (µs = frames × 10⁶ / rate).
    /// `device` is always the last field and runs to the end of the text, so a device name with
    /// spaces needs no quoting: split at the first " device=". Fields added later go before it.
    static func captureDescription(of capture: NegotiatedCapture) -> String {
        let format = capture.format
        return "format=\(format.sampleFormat.alsaName) rate=\(format.sampleRate) channels=\(format.channels) "
            + "period_frames=\(capture.periodFrames) buffer_frames=\(capture.bufferFrames) device=\(capture.device)"
    }
}
