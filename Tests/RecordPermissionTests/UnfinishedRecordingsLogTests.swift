import Foundation
import Testing
@testable import RecordPermission

/// `AccessLog.unfinishedRecordings()` reads each line for the keys that say what it is and parses
/// whole only the starts left without an end: these logs hold every kind of line it must tell
/// apart, the damaged ones included.
@Suite struct UnfinishedRecordingsLogTests {
    /// A start by a recorder that is not running (another boot).
    private func start(_ id: String, output: String = "/r/ID.flac", armed: Bool = false) -> String {
        let path = output.replacingOccurrences(of: "ID", with: id)
        return #"{"boot":"another-boot","device":"d",\#(armed ? #""armed":true,"# : "")"event":"started","id":"\#(id)","output":"\#(path)","pid":1,"processStart":1,"start":"2026-11-01T10:00:00Z"}"#
    }

    private func entry(_ id: String, extra: String = "") -> String {
        #"{"app":"a","consent":"stored","device":"d","end":"2026-11-01T10:01:00Z","ended":"duration","format":"f","frames":1,\#(extra)"id":"\#(id)","output":"/r/\#(id).flac","start":"2026-11-01T10:00:00Z"}"#
    }

    private func event(_ name: String, _ id: String, output: String? = nil) -> String {
        #"{"event":"\#(name)","id":"\#(id)",\#(output.map { #""output":"\#($0)","# } ?? "")"time":"2026-11-01T10:02:00Z"}"#
    }

    private func write(_ lines: [String], to path: String) throws {
        try FileManager.default.createDirectory(atPath: String(path[..<path.lastIndex(of: "/")!]), withIntermediateDirectories: true)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
    }

    /// Two 64-bit random numbers in 16 hex digits each, so that every id is as long (a number
    /// under 2^60, one in 16, gave 15 digits).
    @Test func recordingIDsAreTwoFixedWidthHexNumbers() {
        for _ in 0..<200 {
            let id = RecordingStart.newID()
            #expect(id.wholeMatch(of: /[0-9a-f]{16}-[0-9a-f]{16}/) != nil, "\(id)")
        }
    }

    @Test func everyKindOfLineCountsAsAWholeParseWouldCountIt() throws {
        let temporary = TemporaryLocations()
        let log = AccessLog(locations: temporary.locations)
        let alive = RecordingStart(id: "alive", outputs: ["/r/alive.flac"], device: "d")
        // The rotated file holds the oldest lines.
        try write([start("a"), start("b")], to: log.path + ".1")
        try write([
            entry("b"),                                                  // b ended
            start("c"), event("noticed", "c"),                           // c: unfinished, already said
            start("d"), event("repaired", "d"),                          // d: repaired
            start("e"), event("file", "e", output: "/r/e-2.flac"), event("file", "e", output: "/r/e-3.flac"),
            start("f"), entry("f", extra: #""segment":1,"#),             // a segment's entry ends nothing
            start("g"), entry("g", extra: #""segment":null,"#),          // nor does one with a null segment
            start("h"), String(entry("h").dropLast(3)),                  // a torn entry is no entry
            start("i"), entry("i", extra: #""id":"i","#),                // nor one that repeats a key
            #"{"boot":"another-boot","event":"started","id":"j","output":"/r/j.flac","start":"2026-11-01T10:00:00Z"}"#,  // no pid: not a start
            start("k", output: "", armed: true),                         // armed, killed before any sound
            start("l", output: #"/r/caf\u00e9 \"ID\".flac"#),             // escapes and a non-ASCII character
            start("m"), entry("m").replacingOccurrences(of: #""id""#, with: #""\u0069d""#),  // an escaped key is still "id"
            start("n"), #"["id","n"]"#, "42", "",                        // lines that are not objects
            String(decoding: alive.jsonLine!, as: UTF8.self),            // a recorder still running
        ], to: log.path)

        let unfinished = log.unfinishedRecordings()
        #expect(unfinished.map(\.start.id) == ["a", "c", "e", "f", "g", "h", "i", "l", "n"])
        #expect(unfinished.map(\.noticed) == [false, true, false, false, false, false, false, false, false])
        #expect(unfinished.first { $0.start.id == "e" }?.start.outputs == ["/r/e.flac", "/r/e-2.flac", "/r/e-3.flac"])
        #expect(unfinished.first { $0.start.id == "l" }?.start.outputs == ["/r/café \"l\".flac"])
    }

    /// Paths holding ", " come back whole from the lists (`outputs`, `unnamedOutputs`); a line
    /// without them, as an older hark wrote it, is still read from the joined `output`.
    @Test func pathsWithACommaAndASpaceComeBackWhole() throws {
        let temporary = TemporaryLocations()
        let log = AccessLog(locations: temporary.locations)
        let written = RecordingStart(id: "comma", outputs: ["/r/talk, notes.flac", "/r/live.opus"],
                                     namedAtFirstAudio: ["/r/talk, notes.flac"], device: "d")
        var line = String(decoding: try #require(written.jsonLine), as: UTF8.self)
        // As the recorder that wrote it had been killed: another process, long gone.
        line = line.replacingOccurrences(of: #""pid":\#(getpid())"#, with: #""pid":999999999"#)
        // The file that replaces one counts once it was named with its first audio.
        try write([line, event("named", "comma", output: "/r/talk, notes.flac"), start("older", output: "/r/a.flac, /r/b.flac")],
                  to: log.path)
        let unfinished = log.unfinishedRecordings()
        #expect(unfinished.map(\.start.id) == ["comma", "older"])
        #expect(unfinished.first?.start.outputs == ["/r/talk, notes.flac", "/r/live.opus"])
        #expect(unfinished.first?.start.namedAtFirstAudio == ["/r/talk, notes.flac"])
        #expect(unfinished.last?.start.outputs == ["/r/a.flac", "/r/b.flac"])
    }

    /// The log at its largest (two files of 1 MB, thousands of recordings, one left unfinished):
    /// found among them, oldest first.
    @Test func aFullLogStillFindsTheOneLeftUnfinished() throws {
        let temporary = TemporaryLocations()
        let log = AccessLog(locations: temporary.locations)
        var old: [String] = [], current: [String] = []
        for index in 0..<2_500 { old += [start("old\(index)"), entry("old\(index)")] }
        for index in 0..<2_500 { current += [start("new\(index)"), index == 1_234 ? event("file", "new1234", output: "/r/x-2.flac") : entry("new\(index)")] }
        try write(old, to: log.path + ".1")
        try write(current, to: log.path)
        let unfinished = log.unfinishedRecordings()
        #expect(unfinished.map(\.start.id) == ["new1234"])
        #expect(unfinished.first?.start.outputs == ["/r/new1234.flac", "/r/x-2.flac"])
    }
}
