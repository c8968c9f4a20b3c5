#if canImport(Glibc)
import Glibc
#endif

/// A moment in civil time, as the store ("updated") and the access log ("start", "end") record it.
///
/// It stands in for Foundation's `Date` and its ISO 8601 formatting, so that stamping a recording
/// runs no Foundation code. Measured on 2026-11-22 with the command in `JSONValue`'s comment (release
/// build, medians): taking `now()` from `Date()` and `iso8601` from `Date.ISO8601FormatStyle` alone,
/// the files still written by `JSONValue`, raised a recording's peak RSS from 15,140 to 16,384 KB
/// (FLAC) and from 16,092 to 17,256 KB (Opus), 1.1–1.2 MiB. And FoundationEssentials alone (no ICU)
/// formats `TimeZone.current` as UTC, so `localISO8601` would lose the zone's offset.
/// `WallClockTimeTests` checks the parser against Foundation's on 1,000 random times and its
/// rejections; `StoreFuzzTests` reaches it through the store's "updated".
///
/// It is POSIX time: seconds since 1970-01-01T00:00:00Z, leap seconds not counted, as a `Double`
/// like `Date`'s, so fractions survive in memory and arithmetic with non-finite values (an age of
/// `inf` hours) stays defined.
public struct WallClockTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var secondsSinceEpoch: Double

    public init(secondsSinceEpoch: Double) {
        self.secondsSinceEpoch = secondsSinceEpoch
    }

    /// The system's real-time clock, which the administrator or NTP may step: use it to stamp
    /// events, never to measure durations (that is `MonotonicClock`'s job).
    /// The corresponding C function is `clock_gettime(CLOCK_REALTIME)`.
    public static func now() -> WallClockTime {
        var time = timespec()
        // Cannot fail: CLOCK_REALTIME always exists and `time` is a valid address.
        clock_gettime(CLOCK_REALTIME, &time)
        return WallClockTime(secondsSinceEpoch: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }

    /// This time moved by `seconds` (backwards when negative).
    public func advanced(by seconds: Double) -> WallClockTime {
        WallClockTime(secondsSinceEpoch: secondsSinceEpoch + seconds)
    }

    public static func < (earlier: WallClockTime, later: WallClockTime) -> Bool {
        earlier.secondsSinceEpoch < later.secondsSinceEpoch
    }

    /// The ISO 8601 text, e.g. "2026-11-22T03:00:00Z", or the raw seconds for a time too far out
    /// for a calendar.
    public var description: String { iso8601 ?? "\(secondsSinceEpoch) s since 1970" }
}

// MARK: ISO 8601

extension WallClockTime {
    /// "2026-11-22T03:00:00Z": UTC, whole seconds, the fraction dropped (rounding down, also before
    /// 1970), which is exactly what Foundation's `.iso8601` date strategy wrote into the store and
    /// the log. Years past 9999 take more digits. Nil for a time `gmtime_r` cannot place in a year
    /// (non-finite, or billions of years out).
    /// The corresponding C function is `gmtime_r`.
    public var iso8601: String? {
        let whole = secondsSinceEpoch.rounded(.down)
        guard whole.isFinite, whole.magnitude < 0x1p62 else { return nil }
        var seconds = time_t(whole)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return nil }
        let year = Int(parts.tm_year) + 1900
        let yearText = (year < 0 ? "-" : "") + Self.padded(year.magnitude, to: 4)
        return "\(yearText)-\(Self.padded(parts.tm_mon + 1))-\(Self.padded(parts.tm_mday))"
            + "T\(Self.padded(parts.tm_hour)):\(Self.padded(parts.tm_min)):\(Self.padded(parts.tm_sec))Z"
    }

    /// "2026-11-22T03:00:00.123456Z": `iso8601` with the microseconds, for times measured that
    /// finely (the first sample of a recording). Nil where `iso8601` is nil.
    public var iso8601Microseconds: String? {
        let whole = secondsSinceEpoch.rounded(.down)
        guard let text = WallClockTime(secondsSinceEpoch: whole).iso8601 else { return nil }
        let micro = min(999_999, Int(((secondsSinceEpoch - whole) * 1_000_000).rounded()))
        return String(text.dropLast()) + "." + Self.padded(UInt(micro), to: 6) + "Z"
    }

    /// "2026-11-22T04:00:00+01:00": civil time in the local zone (`TZ`, else /etc/localtime) with
    /// its offset from UTC, whole seconds, the fraction dropped as in `iso8601`. Names the same
    /// moment as `iso8601`, and also the wall-clock time and date the person recording saw; the
    /// offset is always written as ±HH:MM, "+00:00" in UTC. Nil where `iso8601` is nil.
    /// The corresponding C function is `localtime_r` (after `tzset`, which reads `TZ`).
    public var localISO8601: String? {
        let whole = secondsSinceEpoch.rounded(.down)
        guard whole.isFinite, whole.magnitude < 0x1p62 else { return nil }
        var seconds = time_t(whole)
        var parts = tm()
        tzset()
        guard localtime_r(&seconds, &parts) != nil else { return nil }
        let year = Int(parts.tm_year) + 1900
        let yearText = (year < 0 ? "-" : "") + Self.padded(year.magnitude, to: 4)
        // tm_gmtoff: seconds east of UTC. Offsets with seconds (old local mean times) are cut to
        // the minute, as ISO 8601 has no place for them.
        let offsetMinutes = Int(parts.tm_gmtoff) / 60
        let offsetText = (offsetMinutes < 0 ? "-" : "+") + Self.padded(offsetMinutes.magnitude / 60)
            + ":" + Self.padded(offsetMinutes.magnitude % 60)
        return "\(yearText)-\(Self.padded(parts.tm_mon + 1))-\(Self.padded(parts.tm_mday))"
            + "T\(Self.padded(parts.tm_hour)):\(Self.padded(parts.tm_min)):\(Self.padded(parts.tm_sec))\(offsetText)"
    }

    /// The time as hark shows it to people (listings, notices): `localISO8601`, the clock and date
    /// they saw and that `--since` and the library's file names use, or `description` for a time
    /// no calendar can place. Files and `--json` keep UTC (`iso8601`).
    public var localText: String { localISO8601 ?? description }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH[[:]MM])`, e.g. "2026-11-22T03:00:00Z",
    /// "2026-11-22T04:00:00.25+01:00" or "2026-11-22T04:00:00+0100". Nil for anything else: a
    /// missing zone (the time would be ambiguous), fields out of range (month 13, 30 February,
    /// hour 24, an offset beyond ±18:00), one-digit fields, more than nine fraction digits, or
    /// trailing text. A leap second (:60) is accepted and counts as the next minute's first second,
    /// as POSIX time has no room for it. The corresponding C function is `timegm`.
    public init?(iso8601 text: String) {
        guard let parsed = Self.parse(text, zone: .required), let offset = parsed.offsetSeconds else { return nil }
        var parts = parsed.parts
        // The fields are in range, so timegm cannot fail; -1 is then a real time (23:59:59, 1969).
        let seconds = timegm(&parts)
        self.init(secondsSinceEpoch: Double(seconds - offset) + parsed.fraction)
    }

    /// Parses what a person types for a moment: the same with its zone left out, or a date alone
    /// (`2026-11-22`, its midnight), which ISO 8601 reads as local time (the process's `TZ`), so
    /// "since 2026-11-22" in Tokyo means from Tokyo's midnight. A zone, when given, is taken as
    /// for `init(iso8601:)`. A local time that a clock change skips (02:30 on a spring-forward
    /// night) is read as `mktime` reads it, an hour on. The corresponding C function is `mktime`.
    public init?(localISO8601 text: String) {
        guard let parsed = Self.parse(text, zone: .optional) else { return nil }
        var parts = parsed.parts
        if let offset = parsed.offsetSeconds {
            self.init(secondsSinceEpoch: Double(timegm(&parts) - offset) + parsed.fraction)
            return
        }
        parts.tm_isdst = -1
        let seconds = mktime(&parts)
        // -1 is also 23:59:59 UTC on 1969-12-31: in range fields make it that moment, not a failure.
        self.init(secondsSinceEpoch: Double(seconds) + parsed.fraction)
    }

    private enum ZoneRule { case required, optional }

    /// The fields of `YYYY-MM-DD[THH:MM:SS[.fraction][zone]]` (the time and its zone only as
    /// `zone` allows), checked for range; nil for anything else.
    private static func parse(_ text: String, zone: ZoneRule) -> (parts: tm, fraction: Double, offsetSeconds: Int?)? {
        var scanner = DigitScanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4...9), scanner.skip("-"),
              let month = scanner.number(digits: 2...2), scanner.skip("-"),
              let day = scanner.number(digits: 2...2),
              (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        if scanner.isAtEnd { return zone == .optional ? (parts, 0, nil) : nil }
        guard scanner.skip("T"),
              let hour = scanner.number(digits: 2...2), scanner.skip(":"),
              let minute = scanner.number(digits: 2...2), scanner.skip(":"),
              let second = scanner.number(digits: 2...2),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        var fraction = 0.0
        if scanner.skip(".") {
            let start = scanner.position
            guard let digits = scanner.number(digits: 1...9) else { return nil }
            fraction = Double(digits) / Double(Self.powerOfTen(scanner.position - start))
        }
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        if scanner.isAtEnd { return zone == .optional ? (parts, fraction, nil) : nil }
        guard let offset = scanner.zoneOffsetSeconds(), scanner.isAtEnd else { return nil }
        return (parts, fraction, offset)
    }

    private static func padded(_ value: some BinaryInteger, to width: Int = 2) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func powerOfTen(_ exponent: Int) -> Int {
        (0..<exponent).reduce(1) { power, _ in power * 10 }
    }

    /// The proleptic Gregorian calendar's month lengths, as `timegm` counts them.
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// Reads the fixed-width numeric fields of an ISO 8601 time, left to right.
private struct DigitScanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    /// Consumes `character` if it comes next.
    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
        position += 1
        return true
    }

    /// A run of ASCII digits whose length is within `digits`; nil (position unspecified) otherwise.
    mutating func number(digits: ClosedRange<Int>) -> Int? {
        var value = 0
        let start = position
        while position < bytes.count, position - start < digits.upperBound,
              (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            value = value * 10 + Int(bytes[position] - UInt8(ascii: "0"))
            position += 1
        }
        let isFollowedByDigit = position < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position])
        return digits.contains(position - start) && !isFollowedByDigit ? value : nil
    }

    /// `Z` (or `z`) for UTC, or `±HH`, `±HHMM`, `±HH:MM` east (+) or west (-) of it, in seconds.
    mutating func zoneOffsetSeconds() -> Int? {
        if skip("Z") || skip("z") { return 0 }
        let sign = skip("+") ? 1 : skip("-") ? -1 : 0
        guard sign != 0, let hours = twoDigits() else { return nil }
        var minutes = 0
        if !isAtEnd {
            _ = skip(":")
            guard let digits = twoDigits(), digits <= 59 else { return nil }
            minutes = digits
        }
        // ±18:00 bounds Foundation's time zones, and so what `--since` accepted before.
        let offset = hours * 3600 + minutes * 60
        return offset <= 18 * 3600 ? sign * offset : nil
    }

    /// Exactly two digits, whatever follows: the hours of `+0100` run straight into the minutes.
    private mutating func twoDigits() -> Int? {
        guard bytes.count - position >= 2 else { return nil }
        let digits = bytes[position..<position + 2].map { Int($0) - Int(UInt8(ascii: "0")) }
        guard digits.allSatisfy({ (0...9).contains($0) }) else { return nil }
        position += 2
        return digits[0] * 10 + digits[1]
    }
}
