import Foundation
import SignalGenerator
import Testing
@testable import RecordPermission

/// The gate's timestamps: ISO 8601 as Foundation's `.iso8601` strategy wrote it, parsed strictly.
@Suite struct WallClockTimeTests {
    private func time(_ seconds: Double) -> WallClockTime { WallClockTime(secondsSinceEpoch: seconds) }

    @Test func formatsWholeSecondsInUTCRoundingDown() {
        #expect(time(0).iso8601 == "1970-01-01T00:00:00Z")
        #expect(time(1_795_314_122.999).iso8601 == "2026-11-22T02:22:02Z")
        #expect(time(-0.5).iso8601 == "1969-12-31T23:59:59Z", "before 1970 the fraction still rounds down")
        #expect(time(951_782_400).iso8601 == "2000-02-29T00:00:00Z")
        #expect(time(253_402_300_799).iso8601 == "9999-12-31T23:59:59Z")
        #expect(time(253_402_300_800).iso8601 == "10000-01-01T00:00:00Z")
        #expect(time(.infinity).iso8601 == nil && time(.nan).iso8601 == nil && time(1e300).iso8601 == nil)
        #expect("\(time(0))" == "1970-01-01T00:00:00Z")
    }

    @Test func formatsAsFoundationDid() {
        var random = SplitMix64(seed: 0x5449_4D45)
        for _ in 0..<2_000 {
            // 1900 to 2200, with fractions.
            let seconds = Double(random.next(below: 9_467_280_000)) - 2_208_988_800 + Double(random.next(below: 1000)) / 1000
            #expect(time(seconds).iso8601 == Date(timeIntervalSince1970: seconds).formatted(.iso8601), "\(seconds)")
        }
    }

    /// The DATE tag's form: the same moment as `iso8601`, in the zone the process runs in (the
    /// CLI tests set `TZ` for hark; here the offset is checked against Foundation's time zone).
    @Test func localFormNamesTheSameMomentWithTheZonesOffset() throws {
        var random = SplitMix64(seed: 0x4C4F_4341)
        for _ in 0..<2_000 {
            let seconds = Double(random.next(below: 9_467_280_000)) - 2_208_988_800 + Double(random.next(below: 1000)) / 1000
            let text = try #require(time(seconds).localISO8601)
            #expect(WallClockTime(iso8601: text) == time(seconds.rounded(.down)), "\(text)")
            let offset = TimeZone.current.secondsFromGMT(for: Date(timeIntervalSince1970: seconds)) / 60
            let sign = offset < 0 ? "-" : "+"
            let expected = sign + String(format: "%02d:%02d", abs(offset) / 60, abs(offset) % 60)
            #expect(text.hasSuffix(expected), "\(text)")
        }
        #expect(time(.nan).localISO8601 == nil && time(1e300).localISO8601 == nil)
    }

    @Test func parseInvertsFormat() throws {
        var random = SplitMix64(seed: 0x4953_4F38)
        for _ in 0..<2_000 {
            let seconds = Double(random.next(below: 20_000_000_000)) - 10_000_000_000
            let text = try #require(time(seconds).iso8601)
            #expect(WallClockTime(iso8601: text) == time(seconds), "\(text)")
        }
    }

    @Test(arguments: [
        ("2026-11-22T02:22:02Z", 1_795_314_122.0),
        ("2026-11-22T02:22:02z", 1_795_314_122.0),
        ("2026-11-22T03:22:02+01:00", 1_795_314_122.0),
        ("2026-11-22T03:22:02+0100", 1_795_314_122.0),
        ("2026-11-22T03:22:02+01", 1_795_314_122.0),
        ("2026-11-22T01:52:02-00:30", 1_795_314_122.0),
        ("2026-11-22T02:22:02-00:00", 1_795_314_122.0),
        ("2026-11-21T12:22:02-14:00", 1_795_314_122.0),
        ("2026-11-22T02:22:02.5Z", 1_795_314_122.5),
        ("2026-11-22T02:22:02.05Z", 1_795_314_122.05),
        ("2026-11-22T03:22:02.25+01:00", 1_795_314_122.25),
        ("2026-11-22T02:22:02.123456789Z", 1_795_314_122.123456789),
        ("2026-11-22T23:59:60Z", 1_795_392_000.0),
        ("2024-02-29T00:00:00Z", 1_709_164_800.0),
        ("1969-12-31T23:59:59Z", -1.0),
        ("0001-01-01T00:00:00Z", -62_135_596_800.0),
        ("10000-01-01T00:00:00Z", 253_402_300_800.0),
    ])
    func parses(_ text: String, _ seconds: Double) throws {
        let parsed = try #require(WallClockTime(iso8601: text))
        #expect(abs(parsed.secondsSinceEpoch - seconds) < 1e-6, "\(parsed.secondsSinceEpoch)")
    }

    @Test(arguments: [
        "", "2026-11-22", "2026-11-22T02:22:02", "2026-11-22T02:22Z", "2026-11-22 02:22:02Z", "2026-11-22t02:22:02Z",
        "20261122T022202Z", "2026-1-22T02:22:02Z", "2026-11-2T02:22:02Z", "2026-11-22T2:22:02Z", "226-11-22T02:22:02Z",
        "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-11-00T00:00:00Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
        "2026-11-22T24:00:00Z", "2026-11-22T02:60:00Z", "2026-11-22T02:22:61Z",
        "2026-11-22T02:22:02.Z", "2026-11-22T02:22:02,5Z", "2026-11-22T02:22:02.1234567890Z", "2026-11-22T02:22:02.5",
        "2026-11-22T02:22:02+18:01", "2026-11-22T02:22:02-19", "2026-11-22T02:22:02+01:60", "2026-11-22T02:22:02+1:00", "2026-11-22T02:22:02+01:0",
        "2026-11-22T02:22:02+01:", "2026-11-22T02:22:02+", "2026-11-22T02:22:02+01:00:00", "2026-11-22T02:22:02−01:00",
        "2026-11-22T02:22:02GMT", "2026-11-22T02:22:02Zjunk", "2026-11-22T02:22:02Z ", " 2026-11-22T02:22:02Z",
        "+2026-11-22T02:22:02Z", "-2026-11-22T02:22:02Z", "２０２６-11-22T02:22:02Z", "2026-11-22T02:22:02.5e3Z",
    ])
    func rejects(_ text: String) {
        #expect(WallClockTime(iso8601: text) == nil)
    }

    @Test func everythingItAcceptsFoundationReadTheSame() throws {
        var random = SplitMix64(seed: 0x5A4F_4E45)
        let zones = ["Z", "+01:00", "-0530", "+14", "-00:00", "+18:00", "-18"]
        for _ in 0..<1_000 {
            let seconds = Double(random.next(below: 4_000_000_000))
            let base = try #require(time(seconds).iso8601).dropLast()
            let fraction = random.next(below: 2) == 0 ? "" : ".\(random.next(below: 1000))"
            let text = String(base) + fraction + zones[random.next(below: zones.count)]
            let ours = try #require(WallClockTime(iso8601: text), "\(text)")
            let foundation = try Date(text, strategy: .iso8601)
            #expect(abs(ours.secondsSinceEpoch - foundation.timeIntervalSince1970) < 1e-6, "\(text)")
        }
    }

    @Test func nowIsTheRealTimeClock() {
        let before = Date().timeIntervalSince1970
        let now = WallClockTime.now()
        let after = Date().timeIntervalSince1970
        #expect(now.secondsSinceEpoch >= before - 0.001 && now.secondsSinceEpoch <= after + 0.001)
    }

    @Test func ordersAndMovesBySeconds() {
        #expect(time(1) < time(2) && !(time(2) < time(2)))
        #expect(time(100).advanced(by: -40) == time(60))
        #expect(time(100).advanced(by: -.infinity) < time(-1e300), "an age of inf hours reaches before every entry")
    }
}
