import Encoding
import RecordPermission
#if canImport(Glibc)
import Glibc
#endif

/// Writes a finished file's first sample's wall-clock time and the device clock's drift into the
/// room its header kept for them, once the recording has ended (neither is known when the header
/// is written):
///
/// - FLAC and Ogg Opus: the tags `HARK_FIRST_SAMPLE_TIME=2026-11-23T23:29:11.482913Z` (UTC, to the
///   microsecond; the time of the file's first sample), `HARK_FIRST_SAMPLE=000000096000` (the sample
///   count that time refers to: that sample's number in the recording, 0 but for the later files
///   of a split; `AutomaticTags` writes it as the file starts) and `HARK_CLOCK_DRIFT_PPM=+00001.300`
///   (or `unmeasured` for a recording too short to tell), written over placeholders of the same
///   width (`AutomaticTags`), so nothing moves. In Ogg the OpusTags page's CRC is computed again.
/// - WAV: the Broadcast WAVE `bext` chunk (EBU Tech 3285): OriginationDate and OriginationTime of
///   the first sample in local time, TimeReference the samples since local midnight at it (what
///   broadcast tools align on), and the same two values in the Description.
///
/// A file of a split recording gets the time of its own first sample: the recording's, plus the
/// frames before it at the nominal rate. Not real-time code: the session thread runs it after the
/// encoders have finished, and syncs each file it changed.
struct ClockStamp {
    static let timeKey = "HARK_FIRST_SAMPLE_TIME"
    static let sampleKey = "HARK_FIRST_SAMPLE"
    static let driftKey = "HARK_CLOCK_DRIFT_PPM"
    static let timePlaceholder = "0000-00-00T00:00:00.000000Z"
    /// A file's first sample's number in the recording is written in this many digits (a day at
    /// 384 kHz takes 11).
    static let sampleDigits = 12
    static let driftPlaceholder = "unmeasured"

    let clock: CaptureClock
    let fileStartFrame: Int
    let sampleRate: Int

    /// The file's first sample's time.
    var time: WallClockTime {
        clock.firstSampleTime.advanced(by: Double(fileStartFrame) / Double(sampleRate))
    }

    /// "+00001.300": the drift, signed, in the placeholder's ten characters.
    var driftValue: String {
        guard let drift = clock.driftPPM else { return Self.driftPlaceholder }
        let thousandths = Int((abs(drift) * 1000).rounded())
        var whole = String(thousandths / 1000)
        while whole.count < 5 { whole = "0" + whole }
        var fraction = String(thousandths % 1000)
        while fraction.count < 3 { fraction = "0" + fraction }
        return (drift < 0 && thousandths > 0 ? "-" : "+") + whole + "." + fraction
    }

    /// The edit that writes these values over the room `path`'s header kept for them (see
    /// `HeaderPatch`): the tags for FLAC and Opus, the `bext` chunk for WAV.
    func edit(for codec: CodecSettings) -> (inout HeaderRoom) -> Bool {
        switch codec {
        case .flac, .opus: { writeTags(into: &$0) }
        case .wav: { writeBroadcastExtension(into: &$0) }
        case .raw: { _ in false }
        }
    }

    /// "000000096000": a first sample's number in `sampleDigits` digits.
    static func sampleText(_ frame: Int) -> String {
        var sample = String(frame)
        while sample.count < sampleDigits { sample = "0" + sample }
        return sample
    }

    /// Writes over the time's and the drift's placeholders, each where hark reserved it (the first
    /// sample's number needs none: `AutomaticTags` writes it as the file starts); false when
    /// neither was written.
    private func writeTags(into room: inout HeaderRoom) -> Bool {
        guard let timeText = time.iso8601Microseconds else { return false }
        let time = room.overwriteComment(key: Self.timeKey, placeholder: Self.timePlaceholder, with: timeText)
        let drift = room.overwriteComment(key: Self.driftKey, placeholder: Self.driftPlaceholder, with: driftValue)
        return time || drift
    }

    /// Fills the `bext` chunk's time fields and description; false when the file has none.
    private func writeBroadcastExtension(into room: inout HeaderRoom) -> Bool {
        guard room.isBroadcastExtension, let local = time.localISO8601, let utc = time.iso8601Microseconds else { return false }
        let description = "first sample \(utc); device clock \(clock.driftText ?? "drift unmeasured")"
        put(description, at: 0, width: 256, in: &room.bytes)
        put(String(local.prefix(10)), at: 320, width: 10, in: &room.bytes)             // yyyy-mm-dd
        put(String(local.dropFirst(11).prefix(8)), at: 330, width: 8, in: &room.bytes)  // hh:mm:ss
        let reference = UInt64(max(0, (secondsSinceLocalMidnight(local: local) * Double(sampleRate)).rounded()))
        for index in 0..<8 { room.bytes[338 + index] = UInt8(truncatingIfNeeded: reference >> UInt64(8 * index)) }
        return true
    }

    /// Seconds since local midnight at `time`, with its fraction: from the local ISO text's
    /// hh:mm:ss and the time's own fraction of a second.
    private func secondsSinceLocalMidnight(local: String) -> Double {
        let clockText = Array(local.dropFirst(11).prefix(8).utf8)
        guard clockText.count == 8 else { return 0 }
        let digits = { (index: Int) in Double(Int(clockText[index]) - 48) * 10 + Double(Int(clockText[index + 1]) - 48) }
        let seconds = time.secondsSinceEpoch
        return digits(0) * 3600 + digits(3) * 60 + digits(6) + (seconds - seconds.rounded(.down))
    }

    private func put(_ text: String, at offset: Int, width: Int, in bytes: inout [UInt8]) {
        let ascii = Array(text.utf8.prefix(width))
        bytes.replaceSubrange(offset..<(offset + width), with: ascii + [UInt8](repeating: 0, count: width - ascii.count))
    }
}
