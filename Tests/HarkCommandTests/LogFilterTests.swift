import RecordPermission
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import hark

/// `hark permissions log --since`: an age or an ISO 8601 date or time.
@Suite struct LogFilterTests {
    static let now = WallClockTime(iso8601: "2026-11-22T12:00:00Z")!

    @Test(arguments: [
        ("30m", "2026-11-22T11:30:00Z"), ("12h", "2026-11-22T00:00:00Z"), ("7d", "2026-11-15T12:00:00Z"),
        ("90s", "2026-11-22T11:58:30Z"), ("1.5h", "2026-11-22T10:30:00Z"), ("0m", "2026-11-22T12:00:00Z"),
        ("2026-11-21T09:00:00Z", "2026-11-21T09:00:00Z"),
        ("2026-11-21T10:00:00+01:00", "2026-11-21T09:00:00Z"), ("2026-11-21T09:00:00.5Z", "2026-11-21T09:00:00Z"),
    ])
    func accepts(_ text: String, _ expected: String) {
        #expect(LogFilter.startTime(text, now: Self.now)?.iso8601 == expected)
    }

    /// Without a zone, a date (its midnight) or a time is local: the process's TZ, which
    /// `AccessLogTests.aDateOrTimeWithoutAZoneIsLocal` sets to zones far from UTC.
    @Test(arguments: [("2026-11-21", "2026-11-21T00:00:00Z"), ("2026-11-21T09:30:00", "2026-11-21T09:30:00Z"),
                      ("2026-06-21T09:30:00.5", "2026-06-21T09:30:00Z")])
    func aDateOrTimeWithoutAZoneIsLocal(_ text: String, _ asIfUTC: String) throws {
        let start = try #require(LogFilter.startTime(text, now: Self.now))
        var seconds = time_t(start.secondsSinceEpoch.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        let utcReading = try #require(WallClockTime(iso8601: asIfUTC))
        #expect(start.secondsSinceEpoch.rounded(.down) == utcReading.secondsSinceEpoch - Double(parts.tm_gmtoff))
    }

    @Test func anInfiniteAgeReachesBackPastEveryEntry() throws {
        let start = try #require(LogFilter.startTime("infd", now: Self.now))
        #expect(start < WallClockTime(secondsSinceEpoch: -1e300))
    }

    @Test(arguments: ["", "yesterday", "5", "-1h", " 1h", "1w", "nanh", "2026-11-21T09:00", "2026-11-21 09:00:00Z",
                      "2026-02-30", "21.11.2026", "2026-11-21Z"])
    func rejects(_ text: String) {
        #expect(LogFilter.startTime(text, now: Self.now) == nil)
    }
}
