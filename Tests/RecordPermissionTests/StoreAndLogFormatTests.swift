import Foundation
import SignalGenerator
import Testing
@testable import RecordPermission

/// The store and the access log stay byte-compatible with the files earlier versions wrote through
/// Foundation's `JSONEncoder`, and a store that is not exactly a record never grants.
@Suite struct StoreAndLogFormatTests {
    /// A store as hark wrote it with Foundation (`permissions grant microphone`, 2026-11-22).
    static let storeWrittenWithFoundation = """
        {
          "app" : "dev.hark.cli",
          "decisions" : {
            "microphone" : {
              "setBy" : "command",
              "status" : "authorized",
              "updated" : "2026-11-22T02:21:56Z"
            }
          },
          "format" : 1
        }

        """

    /// Access-log lines as hark and an app that does not report counters wrote them with Foundation.
    static let logWrittenWithFoundation = #"""
        {"app":"dev.hark.cli","consent":"stored","device":"filecap","end":"2026-11-22T02:22:02Z","ended":"duration","format":"S16_LE, 2 ch, 48000 Hz, flac","frames":24000,"framesDropped":0,"framesLostToOverruns":0,"output":"/tmp/jsoncompat/sub dir/ü\"x\\y.flac","overruns":0,"start":"2026-11-22T02:22:01Z"}
        {"app":"org.example.voicememo","consent":"prompt","device":"default","end":"2026-11-22T02:30:05Z","ended":"SIGINT","format":"S16_LE, 1 ch, 48000 Hz, flac","frames":96000,"output":"memo.flac","start":"2026-11-22T02:30:03Z"}

        """#

    @Test func aStoreWrittenWithFoundationReadsAndIsWrittenBackByteForByte() throws {
        let bytes = Array(Self.storeWrittenWithFoundation.utf8)
        let record = try #require(PermissionStore.Record(storeBytes: bytes))
        let updated = try #require(WallClockTime(iso8601: "2026-11-22T02:21:56Z"))
        #expect(record == PermissionStore.Record(format: 1, app: "dev.hark.cli", decisions: [
            "microphone": PermissionStore.Decision(status: .authorized, setBy: "command", updated: updated),
        ]))
        #expect(record.storeBytes == bytes)

        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: AppManifest(appIdentifier: "dev.hark.cli", displayName: "hark",
                                                        microphoneUsageDescription: "Tests."),
                                  locations: temporary.locations)
        try gate.reset(nil)
        try gate.setDecision(.denied, for: .microphone)
        try Self.storeWrittenWithFoundation.write(toFile: gate.store.path, atomically: true, encoding: .utf8)
        chmod(gate.store.path, 0o600)
        #expect(gate.statusDetail(for: .microphone) == StatusDetail(
            resource: .microphone, status: .authorized, setBy: "command", updated: updated, note: nil))
    }

    @Test func aLogWrittenWithFoundationReadsAndIsWrittenBackByteForByte() throws {
        let lines = Self.logWrittenWithFoundation.split(separator: "\n").map(String.init)
        let entries = try lines.map { line in try #require(AccessLogEntry(json: JSONValue(parsing: Array(line.utf8)))) }
        #expect(entries.map(\.jsonLine) == lines)
        #expect(entries[0].output == #"/tmp/jsoncompat/sub dir/ü"x\y.flac"# && entries[0].framesDropped == 0)
        #expect(entries[1].frames == 96_000 && entries[1].framesDropped == nil && entries[1].consent == .prompt)
        #expect(entries[1].end.secondsSinceEpoch - entries[1].start.secondsSinceEpoch == 2)
    }

    /// What the `Codable` types wrote, for comparison with the new writers on random content.
    private struct FoundationDecision: Codable { var status: String; var setBy: String; var updated: Date }
    private struct FoundationRecord: Codable { var format: Int; var app: String; var decisions: [String: FoundationDecision] }
    private struct FoundationEntry: Codable {
        var start: Date, end: Date, app: String, device: String, format: String, output: String, frames: Int
        var consent: String, ended: String, framesDropped: Int?, overruns: Int?, framesLostToOverruns: Int?
        var framesPadded: Int?, framesDroppedPadded: Int?
    }

    @Test func randomStoresAndLogLinesMatchWhatJSONEncoderWrote() throws {
        let store = JSONEncoder()
        store.outputFormatting = [.sortedKeys, .prettyPrinted]
        store.dateEncodingStrategy = .iso8601
        let log = JSONEncoder()
        log.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        log.dateEncodingStrategy = .iso8601
        var random = SplitMix64(seed: 0x464F_524D)
        func text() -> String {
            let pieces = ["a", "/", "\\", "\"", "é", "\u{1}", "\n", " ", "dev.hark.cli", "😀"]
            return (0..<random.next(below: 5)).map { _ in pieces[random.next(below: pieces.count)] }.joined()
        }
        func seconds() -> Double { Double(random.next(below: 4_000_000_000)) + Double(random.next(below: 1000)) / 1000 }
        for _ in 0..<300 {
            var decisions: [String: PermissionStore.Decision] = [:]
            var foundationDecisions: [String: FoundationDecision] = [:]
            for _ in 0..<random.next(below: 4) {
                let statuses: [AuthorizationStatus] = [.notDetermined, .restricted, .denied, .authorized]
                let key = text(), status = statuses[random.next(below: 4)], setBy = text(), time = seconds()
                decisions[key] = PermissionStore.Decision(status: status, setBy: setBy,
                                                          updated: WallClockTime(secondsSinceEpoch: time))
                foundationDecisions[key] = FoundationDecision(status: status.rawValue, setBy: setBy,
                                                              updated: Date(timeIntervalSince1970: time))
            }
            let app = text()
            let record = PermissionStore.Record(format: 1, app: app, decisions: decisions)
            let expected = Array(try store.encode(FoundationRecord(format: 1, app: app, decisions: foundationDecisions))) + [0x0A]
            #expect(record.storeBytes == expected, "\(String(decoding: expected, as: UTF8.self))")

            let start = seconds(), end = start + seconds() / 1e6, frames = random.next(below: 1 << 40)
            let counts = (0..<5).map { _ in random.next(below: 2) == 0 ? nil : random.next(below: 1000) }
            var entry = AccessLogEntry(
                start: WallClockTime(secondsSinceEpoch: start), end: WallClockTime(secondsSinceEpoch: end), app: text(),
                device: text(), format: text(), output: text(), frames: frames, consent: .once, ended: text(),
                framesDropped: counts[0], overruns: counts[1], framesLostToOverruns: counts[2], framesPadded: counts[3])
            entry.framesDroppedPadded = counts[4]
            let foundationEntry = FoundationEntry(
                start: Date(timeIntervalSince1970: start), end: Date(timeIntervalSince1970: end), app: entry.app,
                device: entry.device, format: entry.format, output: entry.output, frames: frames, consent: "once",
                ended: entry.ended, framesDropped: counts[0], overruns: counts[1], framesLostToOverruns: counts[2],
                framesPadded: counts[3], framesDroppedPadded: counts[4])
            #expect(entry.jsonLine == String(decoding: try log.encode(foundationEntry), as: UTF8.self))
        }
    }

    /// Each of these is one edit away from the authorized store above, and none may read as a record.
    static let notRecords: [String] = [
        storeWrittenWithFoundation.replacingOccurrences(of: #""format" : 1"#, with: #""format" : "1""#),
        storeWrittenWithFoundation.replacingOccurrences(of: #""format" : 1"#, with: #""format" : 1.5"#),
        storeWrittenWithFoundation.replacingOccurrences(of: #""format" : 1"#, with: #""version" : 1"#),
        storeWrittenWithFoundation.replacingOccurrences(of: #""format" : 1"#, with: #""format" : null"#),
        storeWrittenWithFoundation.replacingOccurrences(of: #""authorized""#, with: #""Authorized""#),
        // Only the administrator's policy restricts, and no decision is stored as none: a store
        // saying either was edited by hand (it was reported as the administrator's restriction).
        storeWrittenWithFoundation.replacingOccurrences(of: #""authorized""#, with: #""restricted""#),
        storeWrittenWithFoundation.replacingOccurrences(of: #""authorized""#, with: #""notDetermined""#),
        storeWrittenWithFoundation.replacingOccurrences(of: #""setBy" : "command","#, with: ""),
        storeWrittenWithFoundation.replacingOccurrences(of: "02:21:56Z", with: "02:21:56"),
        storeWrittenWithFoundation.replacingOccurrences(of: "02:21:56Z", with: "02:21:56Zjunk"),
        storeWrittenWithFoundation.replacingOccurrences(of: #""app" : "dev.hark.cli""#, with: #""app" : ["dev.hark.cli"]"#),
        // Parsers disagree on which repeated key wins: a repeat is not a record.
        storeWrittenWithFoundation.replacingOccurrences(of: #""status" : "authorized""#,
                                                         with: #""status" : "denied", "status" : "authorized""#),
        storeWrittenWithFoundation.replacingOccurrences(of: #""microphone" : {"#, with: #""camera" : null, "microphone" : {"#),
        storeWrittenWithFoundation + "x",
        storeWrittenWithFoundation.replacingOccurrences(of: "\"format\" : 1\n", with: "\"format\" : 1,\n"),
        "\u{FEFF}" + storeWrittenWithFoundation,
        #"{"app": "dev.hark.cli", "decisions": [], "format": 1}"#,
        "[" + storeWrittenWithFoundation + "]",
    ]

    @Test(arguments: notRecords)
    func aStoreThatIsNotExactlyARecordNeverGrants(_ text: String) throws {
        #expect(PermissionStore.Record(storeBytes: Array(text.utf8)) == nil)
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: AppManifest(appIdentifier: "dev.hark.cli", displayName: "hark",
                                                        microphoneUsageDescription: "Tests."),
                                  locations: temporary.locations)
        try gate.setDecision(.denied, for: .microphone)
        try text.write(toFile: gate.store.path, atomically: true, encoding: .utf8)
        chmod(gate.store.path, 0o600)
        let detail = gate.statusDetail(for: .microphone)
        #expect(detail.status == .denied && detail.note?.contains("is corrupt") == true, "\(detail)")
    }

    @Test func decisionsForResourcesThisVersionDoesNotKnowAreKept() throws {
        let text = Self.storeWrittenWithFoundation.replacingOccurrences(
            of: #""microphone" : {"#,
            with: #""camera" : {"setBy" : "prompt", "status" : "denied", "updated" : "2026-11-20T10:00:00+01:00"}, "microphone" : {"#)
        let record = try #require(PermissionStore.Record(storeBytes: Array(text.utf8)))
        #expect(record.decisions["camera"]?.status == .denied)
        #expect(String(decoding: record.storeBytes ?? [], as: UTF8.self).contains(#""updated" : "2026-11-20T09:00:00Z""#))
    }

    @Test func resetRemovesWhateverWasPlantedAtTheStorePathButNotWhatItLinksTo() throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        try gate.setDecision(.authorized, for: .microphone)
        let outside = temporary.root.path + "/outside.json"
        try Self.storeWrittenWithFoundation.write(toFile: outside, atomically: true, encoding: .utf8)
        let store = gate.store.path
        try FileManager.default.removeItem(atPath: store)
        try FileManager.default.createDirectory(atPath: store + "/a/b", withIntermediateDirectories: true)
        try "x".write(toFile: store + "/a/b/file", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: store + "/a/link", withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(atPath: store + "/dirlink", withDestinationPath: temporary.root.path)
        #expect(gate.statusDetail(for: .microphone).note?.contains("is not a regular file") == true)

        try gate.reset(nil)
        #expect(!FileManager.default.fileExists(atPath: store))
        #expect(FileManager.default.fileExists(atPath: outside), "the link is removed, not its target")
        #expect(FileManager.default.fileExists(atPath: temporary.locations.storeDirectory))
        #expect(gate.authorizationStatus(for: .audio) == .notDetermined)

        try FileManager.default.createSymbolicLink(atPath: store, withDestinationPath: temporary.root.path + "/nowhere")
        try gate.reset(nil)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: store)) == nil, "a dangling link is removed too")
        try gate.reset(nil)  // nothing there: nothing to do
    }
}
