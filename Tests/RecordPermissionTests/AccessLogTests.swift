import Foundation
import Testing
@testable import RecordPermission

@Suite struct AccessLogRotationTests {
    private func entry(_ index: Int) -> AccessLogEntry {
        AccessLogEntry(start: WallClockTime(secondsSinceEpoch: Double(index)), end: WallClockTime(secondsSinceEpoch: Double(index + 1)),
                       app: "org.example.tests", device: "default", format: "S16_LE, 2 ch, 48000 Hz, flac",
                       output: "/tmp/take-\(index).flac", frames: index, consent: .stored, ended: "duration")
    }

    @Test func appendsOneLinePerRecordingInOrder() throws {
        let temporary = TemporaryLocations()
        let log = AccessLog(locations: temporary.locations)
        for index in 0..<5 { try log.append(entry(index)) }
        #expect(log.entries() == (0..<5).map(entry))
        var info = stat()
        #expect(lstat(log.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func rotationKeepsTheLogBoundedAndTheNewestEntries() throws {
        let temporary = TemporaryLocations()
        let log = AccessLog(locations: temporary.locations, maxBytes: 2_000)
        for index in 0..<200 { try log.append(entry(index)) }
        var current = stat(), rotated = stat()
        #expect(lstat(log.path, &current) == 0 && current.st_size <= 2_000)
        #expect(lstat(log.path + ".1", &rotated) == 0 && rotated.st_size <= 2_000)
        let kept = log.entries()
        #expect(kept.last == entry(199))
        #expect(kept.map(\.frames) == Array(kept.first!.frames...199), "the kept entries are the newest, in order")
    }

    /// A log others could read (0644) is made private again; one others could have written
    /// (0666) is not written to, nor made private, which would vouch for lines anyone could have
    /// added (a forged entry then read as hark's).
    @Test func aLogLoosenedByHandIsMadePrivateAgainOnlyWhereNobodyElseCouldWriteIt() throws {
        let temporary = TemporaryLocations()
        let log = AccessLog(locations: temporary.locations)
        try log.append(entry(0))
        chmod(log.path, 0o644)
        try log.append(entry(1))
        var info = stat()
        #expect(lstat(log.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(log.entries() == [entry(0), entry(1)])

        chmod(log.path, 0o666)
        #expect(log.entries().isEmpty, "a log others could have written is not read")
        #expect(throws: PermissionChangeError.self) { try log.append(entry(2)) }
        #expect(lstat(log.path, &info) == 0 && info.st_mode & 0o777 == 0o666, "left as it was")
        chmod(log.path, 0o600)
        #expect(log.entries() == [entry(0), entry(1)], "and nothing written to it")
    }
}
