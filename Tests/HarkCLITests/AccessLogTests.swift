import AudioFormat
import Foundation
import Testing

/// Every recording leaves one line in the access log, and revoking access stops a running
/// recording within a second with a finished file.
@Suite struct AccessLogTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    struct Entry: Decodable {
        let start: String, end: String, app: String, device: String, format: String, output: String
        let frames: Int, consent: String, ended: String
    }

    private func entries(_ rig: ALSATestRig, _ extra: [String] = []) throws -> [Entry] {
        let result = try runHark(["permissions", "log", "--json"] + extra, rig: rig)
        #expect(result.status == 0)
        return try String(decoding: result.standardOutput, as: UTF8.self).split(separator: "\n")
            .map { try JSONDecoder().decode(Entry.self, from: Data($0.utf8)) }
    }

    @Test func normalSignalAndRevokedEndsAreEachLogged() throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        #expect(try runHark(["record", "-D", "filecap", "-d", "1", "-o", rig.path("a.flac")], rig: rig).status == 0)

        let interrupted = try startHark(["record", "-D", "pacedcap", "-o", "-"], rig: rig)
        try OutputGrowth.waitForFLACAudio(try #require(OutputGrowth.standardOutputFile(in: rig)), seconds: 1)
        interrupted.send(SIGINT)
        #expect(interrupted.wait(timeout: 10).status == 0)

        let revoked = try startHark(["record", "-D", "pacedcap", "-o", rig.path("c.flac")], rig: rig)
        try OutputGrowth.waitForFLACAudio(rig.path("c.flac"), seconds: 1)
        #expect(try runHark(["permissions", "deny", "microphone"], rig: rig).status == 0)
        #expect(revoked.wait(timeout: 10).status == 77)

        let log = try entries(rig)
        #expect(log.map(\.ended) == ["duration", "SIGINT", "revoked"])
        #expect(log.map(\.output) == [rig.path("a.flac"), "stdout", rig.path("c.flac")])
        #expect(log.allSatisfy { $0.app == "dev.hark.cli" && $0.consent == "stored" })
        #expect(log[0].frames == 48_000 && log[0].device == "filecap" && log[0].format == "S16_LE, 2 ch, 48000 Hz, flac")
        #expect(log[2].frames == (try FLACTools.totalSamples(rig.path("c.flac"))))
        var info = stat()
        #expect(lstat(rig.accessLogFile, &info) == 0 && info.st_mode & 0o777 == 0o600)

        let text = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
        #expect(text.split(separator: "\n").count == 3 && text.contains("ended: revoked"))
        #expect(try entries(rig, ["--since", "1h"]).count == 3)
        #expect(try entries(rig, ["--since", "2999-01-01"]).isEmpty)
        #expect(try runHark(["permissions", "log", "--since", "yesterday-ish"], rig: rig).status == 64)
        #expect(try entries(rig, ["--app", "dev.hark.cli", "--since", "1h"]).count == 3)
        #expect(try entries(rig, ["--app", "org.example.voicememo"]).isEmpty)
        #expect(try runHark(["permissions", "log", "--app", "../hark"], rig: rig).status == 64)
    }

    /// A line cut short (a full disk's short write, a power cut) has no newline; the next line
    /// was glued to it, and both were lost to every reader: a recording killed next was not found
    /// to repair, its `started` line being the one glued. It now starts on a line of its own.
    @Test func aLineCutShortDoesNotTakeTheNextRecordingsStartWithIt() throws {
        let signal = TestSignal(format: Self.format, frames: 30 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        #expect(try runHark(["record", "-q", "-D", "filecap", "-d", "0.5", "-o", rig.path("a.flac")], rig: rig).status == 0)
        let whole = try Data(contentsOf: URL(fileURLWithPath: rig.accessLogFile))
        try whole.dropLast(30).write(to: URL(fileURLWithPath: rig.accessLogFile))
        let killed = rig.path("killed.flac")
        let recording = try startHark(["record", "-q", "-D", "pacedcap", "-d", "30", "-o", killed], rig: rig)
        try OutputGrowth.waitForFLACAudio(killed, seconds: 0.5)
        recording.send(SIGKILL)
        _ = recording.wait(timeout: 10)
        let listed = try RepairTools.repair(["--unfinished"], rig: rig)
        #expect(listed.status == 2, "\(listed.standardError)")
        // The first recording is listed too (its end was the line torn); it needs nothing.
        #expect(listed.errorLines.contains { $0.contains("unfinished recording started") && $0.contains(killed) },
                "\(listed.standardError)")
    }

    /// A fresh user has no permission store at all; "Allow Once" stores nothing, so there is none
    /// while its recording runs. A reset then still stops it (it said "reset" and changed nothing).
    /// A file name with a newline and an escape sequence in it is shown escaped by
    /// `permissions log` and `list`, one line a recording: as it was, the newline made a fake
    /// entry line below the real one, and the escape reached the terminal (consent audit). The
    /// JSON keeps the name as it is.
    @Test func controlCharactersInANameAreShownEscapedNotAsLines() throws {
        let signal = TestSignal(format: Self.format, frames: 24_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let name = "talk\n2026-01-01 00:00:00  dev.hark.cli  fake → x.flac\u{1B}[2J.flac"
        let output = rig.path(name)
        #expect(try runHark(["record", "-q", "-D", "filecap", "-d", "0.5", "-o", output], rig: rig).status == 0)
        #expect(try entries(rig).last?.output == output)
        let log = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
        let lines = log.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1, "\(log)")
        #expect(log.contains("talk\\n2026-01-01 00:00:00  dev.hark.cli  fake → x.flac\\x1b[2J.flac"), "\(log)")
        #expect(!log.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(log)")
    }

    @Test func aResetWithNoStoreYetStopsAnAllowOnceRecording() throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes, grantMicrophone: false)
        try rig.startPulseAudio()
        let output = rig.path("once.flac")
        let once = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "-o", output]), rig: rig)
        #expect(once.waitFor(promptQuestion))
        once.type("o\n")
        #expect(once.waitFor(" 0:00:01.", timeout: 30), "\(once.screen)")
        #expect(try runHark(["permissions", "reset"], rig: rig).status == 0)
        let result = once.finish(timeout: 10)
        #expect(result.status == 77 && result.screen.contains("microphone access was revoked"), "\(result.screen)")
        try expectFinishedPrefix(output, of: signal)
        #expect(try entries(rig).map(\.ended) == ["revoked"])
    }

    @Test func revokingDuringAPacedRecordingStopsItWithinASecond() throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("revoked.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        #expect(try runHark(["permissions", "reset"], rig: rig).status == 0)
        let result = recording.wait(timeout: 10)
        #expect(result.status == 77)
        let reaction = try revocationStopDelay(rig, output: output)
        print("AccessLogTests: the last sample recorded \(reaction) s after the reset (its stamp's ctime)")
        #expect(reaction < 1, "the capture went on \(reaction) s after the reset")
        #expect(result.errorLines.last == "hark: microphone access was revoked; the recording was stopped and finalized")
        try expectFinishedPrefix(output, of: signal)
    }

    /// Nothing is stored for "Allow Once", yet a reset of the microphone from another terminal
    /// stops that recording too; the log tells the prompt's two kinds of consent apart.
    @Test func anAllowOnceRecordingStopsWhenTheMicrophoneIsResetAndTheLogSaysHowConsentWasGiven() throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes, grantMicrophone: false)
        try rig.startPulseAudio()
        let allowed = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1", "-o", rig.path("a.flac")]), rig: rig)
        #expect(allowed.waitFor(promptQuestion))
        allowed.type("a\n")
        #expect(allowed.finish().status == 0)
        #expect(try runHark(["permissions", "reset", "microphone"], rig: rig).status == 0)

        let output = rig.path("once.flac")
        let once = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "-o", output]), rig: rig)
        #expect(once.waitFor(promptQuestion))
        once.type("o\n")
        // "REC  pacedcap  0:00:00.0" is drawn before any audio; a second on the clock is a second captured.
        #expect(once.waitFor(" 0:00:01.", timeout: 30), "\(once.screen)")
        #expect(try runHark(["permissions", "reset", "microphone"], rig: rig).status == 0)
        let result = once.finish(timeout: 10)
        #expect(result.status == 77, "\(result.screen)")
        let reaction = try revocationStopDelay(rig, output: output)
        print("AccessLogTests: the last sample recorded \(reaction) s after the reset of an Allow Once recording")
        #expect(reaction < 1, "the capture went on \(reaction) s after the reset")
        #expect(result.screen.contains("microphone access was revoked"))
        try expectFinishedPrefix(output, of: signal)

        let log = try entries(rig)
        #expect(log.map(\.consent) == ["prompt", "once"])
        #expect(log.map(\.ended) == ["duration", "revoked"])
    }

    /// A log others could have written (or a link put in its place) is not read; `hark list` and
    /// `hark permissions log` say so and exit 77, instead of "no recordings saved yet" and nothing.
    @Test func aLogThatCannotBeTrustedIsReportedNotTakenForAnEmptyOne() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        #expect(try runHark(["permissions", "grant", "recordings"], rig: rig).status == 0)
        #expect(try runHark(["record", "-D", "filecap", "-d", "0.5"], rig: rig).status == 0)
        #expect(try runHark(["list"], rig: rig).status == 0)

        chmod(rig.accessLogFile, 0o666)
        for command in [["list"], ["permissions", "log"], ["repair", "--unfinished"]] {
            let result = try runHark(command, rig: rig)
            #expect(result.status == 77, "\(command): \(result.standardError)")
            #expect(result.errorLines == ["hark: the access log \(rig.accessLogFile) is writable by other users (mode 666), so it is not read; "
                                          + "move it away, or make it a private file of yours (chmod 600)"], "\(command)")
            #expect(result.standardOutput.isEmpty)
        }
        // A recording neither writes to it nor makes it private, which would vouch for lines
        // anyone could have added; it says so at its start.
        let loose = try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("y.flac")], rig: rig)
        #expect(loose.status == 0 && loose.errorLines.first == "hark: warning: the access log \(rig.accessLogFile) is writable by others, "
                    + "so hark does not write to it; move it away, or make it a private file of yours (chmod 600); this recording is not in the access log",
                "\(loose.standardError)")
        var info = stat()
        #expect(stat(rig.accessLogFile, &info) == 0 && info.st_mode & 0o777 == 0o666, "left as it was")
        chmod(rig.accessLogFile, 0o600)
        #expect(try runHark(["list"], rig: rig).status == 0, "private again, it is read")

        let moved = rig.accessLogFile + ".elsewhere"
        #expect(rename(rig.accessLogFile, moved) == 0 && symlink(moved, rig.accessLogFile) == 0)
        let linked = try runHark(["list"], rig: rig)
        #expect(linked.status == 77)
        #expect(linked.standardError.contains("\(rig.accessLogFile) is a symbolic link, so it is not read"), "\(linked.standardError)")
        let recorded = try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("x.flac")], rig: rig)
        #expect(recorded.standardError.contains("cannot write the access log \(rig.accessLogFile): it is a symbolic link")
                    && recorded.errorLines.first?.hasSuffix("this recording is not in the access log") == true,
                "\(recorded.standardError)")

        // The log's folder a link: not written (as before), and now not read either (it was read
        // and listed, exit 0, while recordings refused to write there).
        #expect(unlink(rig.accessLogFile) == 0 && rename(moved, rig.accessLogFile) == 0)
        let folder = (rig.accessLogFile as NSString).deletingLastPathComponent
        #expect(rename(folder, folder + ".elsewhere") == 0 && symlink(folder + ".elsewhere", folder) == 0)
        for command in [["list"], ["permissions", "log"]] {
            let throughLink = try runHark(command, rig: rig)
            #expect(throughLink.status == 77, "\(command)")
            #expect(throughLink.standardError.contains("the access log's folder \(folder) is a symbolic link, so the log is not read"),
                    "\(command): \(throughLink.standardError)")
        }
        let intoLink = try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("z.flac")], rig: rig)
        #expect(intoLink.errorLines.first == "hark: warning: the access log directory \(folder) is a symbolic link; this recording is not in the access log",
                "\(intoLink.standardError)")
    }

    /// `--since` without a zone is the user's local time, as ISO 8601 reads it: "since today" in
    /// Tokyo means since Tokyo's midnight, not since midnight in London (it listed nothing made
    /// in the first nine hours of a Tokyo day). The zone is chosen from the time of day, so that
    /// local and UTC readings disagree about the entry whenever the test runs.
    @Test func aDateOrTimeWithoutAZoneIsLocal() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 24_000).alsaBytes)
        #expect(try runHark(["record", "-D", "filecap", "-d", "0.2", "-o", rig.path("a.flac")], rig: rig).status == 0)
        let entry = try #require(try entries(rig).first)
        let started = try #require(ISO8601DateFormatter().date(from: entry.start), "\(entry.start)")
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let hour = utc.component(.hour, from: started)
        // From 11:00 UTC, UTC+14 is a day ahead: its date's local midnight (10:00 UTC) is before
        // the entry, that date's UTC midnight after it. Before 11:00, UTC-12 is a day behind: the
        // next local midnight (12:00 UTC) is after the entry, the same date's UTC midnight before.
        let (zone, offsetHours) = hour >= 11 ? ("HRK-14", 14) : ("HRK+12", -12)
        func local(_ date: Date, _ pattern: String) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(secondsFromGMT: offsetHours * 3600)
            formatter.dateFormat = pattern
            return formatter.string(from: date)
        }
        rig.extraEnvironment["TZ"] = zone
        let today = local(started, "yyyy-MM-dd")
        let tomorrow = local(started.addingTimeInterval(86_400), "yyyy-MM-dd")
        #expect(try entries(rig, ["--since", today]).count == 1, "TZ=\(zone) --since \(today), entry \(entry.start)")
        #expect(try entries(rig, ["--since", tomorrow]).isEmpty, "TZ=\(zone) --since \(tomorrow), entry \(entry.start)")
        let minuteBefore = local(started.addingTimeInterval(-60), "yyyy-MM-dd'T'HH:mm:ss")
        let hourAfter = local(started.addingTimeInterval(3600), "yyyy-MM-dd'T'HH:mm:ss")
        #expect(try entries(rig, ["--since", minuteBefore]).count == 1, "TZ=\(zone) --since \(minuteBefore), entry \(entry.start)")
        #expect(try entries(rig, ["--since", hourAfter]).isEmpty, "TZ=\(zone) --since \(hourAfter), entry \(entry.start)")
        // A zone given is taken as given, whatever TZ says.
        #expect(try entries(rig, ["--since", "\(utc.component(.year, from: started))-01-01T00:00:00Z"]).count == 1)
        // The listings show the same local time, with its offset (it was UTC, a day off here);
        // --json keeps the log's UTC.
        let shown = local(started, "yyyy-MM-dd'T'HH:mm:ssxxx")
        let text = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
        #expect(text.hasPrefix("\(shown)  dev.hark.cli  filecap → "), "TZ=\(zone): \(text)")
        let status = String(decoding: try runHark(["permissions", "status"], rig: rig).standardOutput, as: UTF8.self)
        let offset = offsetHours > 0 ? "\\+14:00" : "-12:00"
        #expect(status.range(of: #" on [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"# + offset + #"\)"#, options: .regularExpression) != nil,
                "TZ=\(zone): \(status)")
    }
}
