import AudioFormat
import Foundation
import Testing

/// The consent prompt on a real pseudo-terminal: each answer, what is remembered, and what never
/// prompts.
@Suite struct ConsentPromptTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    private func undecidedRig(seconds: Int = 1) throws -> (ALSATestRig, TestSignal) {
        let signal = TestSignal(format: Self.format, frames: seconds * 48_000)
        return (try ALSATestRig(input: signal.alsaBytes, grantMicrophone: false), signal)
    }

    private func status(_ rig: ALSATestRig) throws -> String {
        String(decoding: try runHark(["permissions"], rig: rig).standardOutput, as: UTF8.self)
    }

    @Test func allowRecordsAndIsRememberedSoTheNextRunDoesNotAsk() throws {
        let (rig, signal) = try undecidedRig()
        let output = rig.path("allowed.flac")
        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1", "-o", output]), rig: rig)
        #expect(session.waitFor(promptQuestion))
        #expect(session.screen.contains("“hark” would like to access the microphone."))
        #expect(session.screen.contains("“hark records audio from the capture device you choose"), "the purpose string is quoted")
        #expect(session.screen.contains("Allow Once") && session.screen.contains("Don't Allow"))
        session.type("a\n")
        let result = session.finish()
        #expect(result.status == 0, "\(result.screen)")
        try expectSameElements(FLACTools.decode(output, bitsPerSample: 16), signal.samples)
        #expect(try status(rig).contains("microphone: authorized (at the prompt on "))

        let again = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1", "-o", output]), rig: rig)
        let second = again.finish()
        #expect(second.status == 0)
        #expect(!second.screen.contains(promptQuestion), "a remembered Allow does not ask again")
    }

    @Test func allowOnceRecordsThisRunOnlyAndTheNextRunAsksAgain() throws {
        let (rig, _) = try undecidedRig()
        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1", "-o", rig.path("once.flac")]), rig: rig)
        #expect(session.waitFor(promptQuestion))
        session.type("o\n")
        #expect(session.finish().status == 0)
        #expect(try status(rig).contains("not determined"))

        let next = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1", "-o", rig.path("twice.flac")]), rig: rig)
        #expect(next.waitFor(promptQuestion), "Allow Once is not remembered")
        next.type("o\n")
        #expect(next.finish().status == 0)
    }

    /// A terminal left raw (`stty raw`: Enter sends a carriage return, nothing echoes) still takes
    /// an answer, which shows as it is typed, and is left raw again afterwards (Enter did nothing
    /// and the prompt waited for ever).
    @Test func aTerminalLeftRawStillTakesTheAnswerAndIsPutBack() throws {
        let (rig, signal) = try undecidedRig()
        let output = rig.path("raw.flac")
        let modes = rig.path("modes")
        let script = "stty raw -echo; stty -g > \(shellQuoted(modes)); "
            + harkCommand(["record", "-D", "filecap", "-d", "1", "-o", output])
            + "; status=$?; stty -g >> \(shellQuoted(modes)); exit $status"
        let session = try TerminalSession("sh -c " + shellQuoted(script), rig: rig)
        #expect(session.waitFor(promptQuestion), "\(session.screen)")
        session.type("o\r")
        let result = session.finish()
        #expect(result.status == 0, "\(result.screen)")
        #expect(result.screen.contains("(a/o/d): o"), "the answer shows: \(result.screen)")
        try expectSameElements(FLACTools.decode(output, bitsPerSample: 16), signal.samples)
        let settings = try String(contentsOfFile: modes, encoding: .utf8).split(separator: "\n")
        #expect(settings.count == 2 && settings[0] == settings[1], "the terminal is as hark found it: \(settings)")
    }

    /// Stopped at the prompt (Ctrl-Z, SIGSTOP) and continued (`fg`), hark asks again, as sudo
    /// does: the user saw the shell's lines and then a bare line with nothing to answer.
    @Test func aPromptStoppedAndContinuedAsksAgain() throws {
        let (rig, _) = try undecidedRig()
        let script = "echo pid=$$; exec " + harkCommand(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("cont.flac")])
        let session = try TerminalSession("sh -c " + shellQuoted(script), rig: rig)
        #expect(session.waitFor(promptQuestion), "\(session.screen)")
        let pid = try #require(session.screen.firstMatch(of: /pid=(\d+)/).flatMap { pid_t($0.1) }, "\(session.screen)")
        #expect(kill(pid, SIGSTOP) == 0)
        // `script` stops itself once it sees its child stopped, whenever it gets to run: continued
        // before that, it would stop afterwards and stay stopped. So it is waited for.
        #expect(waitUntilStopped(session.scriptProcessIdentifier, timeout: TestLoad.seconds(10)), "script did not stop with hark")
        #expect(kill(pid, SIGCONT) == 0)
        #expect(kill(session.scriptProcessIdentifier, SIGCONT) == 0)
        let deadline = Date().addingTimeInterval(TestLoad.seconds(20))
        while session.screen.components(separatedBy: promptQuestion).count < 3, Date() < deadline { usleep(20_000) }
        // Asked again (twice here: `script`, continued, continues hark once more).
        #expect(session.screen.components(separatedBy: promptQuestion).count >= 3, "asked again: \(session.screen)")
        session.type("o\n")
        #expect(session.finish().status == 0)
    }


    /// opened, no file, nothing stored (the device opened, a file was made and "authorized" stored).
    @Test(arguments: ["a\n", "o\n"])
    func aRestrictionMadeWhileThePromptWaitsRefusesTheAnswer(answer: String) throws {
        let (rig, _) = try undecidedRig()
        let output = rig.path("never.flac")
        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1", "-o", output]), rig: rig)
        #expect(session.waitFor(promptQuestion))
        try FileManager.default.createDirectory(at: rig.systemDirectory, withIntermediateDirectories: true)
        try #"{"microphone": {"restricted": true}}"#.write(to: rig.systemDirectory.appendingPathComponent("policy.json"),
                                                           atomically: true, encoding: .utf8)
        session.type(answer)
        let result = session.finish()
        #expect(result.status == 77 && result.screen.contains("Microphone access is restricted by the administrator"), "\(result.screen)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(!FileManager.default.fileExists(atPath: rig.accessLogFile), "nothing was recorded")
        #expect(try status(rig).contains("restricted"))
        #expect(!FileManager.default.fileExists(atPath: rig.storeFile), "nothing stored")
    }

    /// A deny or reset made (from another terminal, or another hark's prompt) while this prompt
    /// waited is older than the answer given to it: Allow then records, where it used to stop at
    /// once as "revoked", leaving an empty file in place of the one that was there.
    @Test(arguments: ["a\n", "o\n"], [["deny"], ["deny", "reset"]])
    func anAnswerGivenAfterADenyWhileThePromptWaitedStands(_ answer: String, _ changes: [String]) throws {
        let (rig, signal) = try undecidedRig()
        // Paced: the watch looks while the recording runs (from a file, it would be over first).
        try rig.startPulseAudio()
        let output = rig.path("answered.flac")
        let session = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "-d", "1", "-o", output]), rig: rig)
        #expect(session.waitFor(promptQuestion))
        for change in changes { #expect(try runHark(["permissions", change, "microphone"], rig: rig).status == 0) }
        session.type(answer)
        let result = session.finish()
        #expect(result.status == 0, "\(result.screen)")
        #expect(!result.screen.contains("revoked"), "\(result.screen)")
        try expectSameElements(FLACTools.decode(output, bitsPerSample: 16), signal.samples)
    }

    /// Killed while the prompt waits (SIGKILL: nothing of hark runs), a recording leaves nothing:
    /// no file, no hidden one, and a file of the same name as it was.
    @Test func aRecordingKilledAtThePromptLeavesNothingBehind() throws {
        let (rig, _) = try undecidedRig()
        // The promise rests on O_TMPFILE; elsewhere a hidden name is the documented fallback.
        let probe = open(rig.directory.path, 0o20000000 | O_DIRECTORY | O_RDWR, 0o600)
        guard probe >= 0 else {
            print("ConsentPromptTests: skipped, \(rig.directory.path)'s file system cannot make a file without a name (O_TMPFILE)")
            return
        }
        close(probe)
        let fresh = rig.path("never-\(UUID().uuidString.prefix(8)).flac")
        let existing = rig.path("kept-\(UUID().uuidString.prefix(8)).wav")
        let old = Data("an older take".utf8)
        try old.write(to: URL(fileURLWithPath: existing))
        for output in [fresh, existing] {
            let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1", "-o", output]), rig: rig)
            #expect(session.waitFor(promptQuestion))
            let killed = try runTool("pkill", ["-KILL", "-f", "--", output])
            #expect(killed.status == 0, "pkill found hark: \(killed.standardError)")
            #expect(session.finish().status != 0)
        }
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(try Data(contentsOf: URL(fileURLWithPath: existing)) == old)
        let temporary = RepairTools.hiddenFiles(in: rig.directory.path).filter { $0.contains(".hark-") }
        #expect(temporary.isEmpty, "\(temporary)")
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let keys: String
        let remembered: Bool
        let says: String
        var testDescription: String { keys.debugDescription }
    }

    static let refusals: [Refusal] = [
        Refusal(keys: "d\n", remembered: true, says: "Not allowed."),
        Refusal(keys: "Don't Allow\n", remembered: true, says: "Not allowed."),
        Refusal(keys: "\u{04}", remembered: false, says: "no answer"),          // Ctrl-D: end of input
        Refusal(keys: "\n", remembered: false, says: "no answer"),
        Refusal(keys: "sure thing\n", remembered: false, says: "unclear answer"),
        Refusal(keys: "\u{03}", remembered: false, says: "interrupted"),        // Ctrl-C
    ]

    @Test(arguments: refusals)
    func refusalsExit77LeaveNoFileAndAreRememberedOnlyWhenExplicit(_ refusal: Refusal) throws {
        let (rig, _) = try undecidedRig()
        let output = rig.path("refused.flac")
        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1", "-o", output]), rig: rig)
        #expect(session.waitFor(promptQuestion))
        session.type(refusal.keys)
        let result = session.finish()
        #expect(result.status == 77, "\(result.screen)")
        #expect(result.screen.contains(refusal.says), "\(result.screen)")
        #expect(!FileManager.default.fileExists(atPath: output))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: rig.directory.path).filter { $0.contains(".hark-") }
        #expect(leftovers.isEmpty, "no temporary output is left: \(leftovers)")
        let stored = try status(rig)
        #expect(stored.contains(refusal.remembered ? "microphone: denied (at the prompt" : "not determined"), "\(stored)")
    }

    @Test func stdoutCarriesOnlyAudioWhileThePromptIsOnTheTerminal() throws {
        let (rig, signal) = try undecidedRig()
        let output = rig.path("piped.flac")
        let command = harkCommand(["record", "-D", "filecap", "-d", "1", "-o", "-"]) + " > " + shellQuoted(output)
        let session = try TerminalSession(command, rig: rig)
        #expect(session.waitFor(promptQuestion))
        session.type("a\n")
        #expect(session.finish().status == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(bytes.prefix(4) == Data("fLaC".utf8))
        try expectSameElements(FLACTools.decode(output, bitsPerSample: 16), signal.samples)
    }

    @Test func withoutATerminalAnUndecidedRecordingExits77AtOnce() throws {
        let (rig, _) = try undecidedRig()
        let output = rig.path("never.flac")
        // setsid: a new session has no controlling terminal, so /dev/tty cannot be opened.
        func detached(_ arguments: [String]) throws -> ToolResult {
            try RunningProcess(URL(fileURLWithPath: findOnPath("setsid") ?? "/usr/bin/setsid"), ["-w", harkBinary.path] + arguments,
                               environment: rig.environment, scratch: rig.directory).wait(timeout: TestLoad.seconds(20))
        }
        // "At once" means no waiting for an answer, not a fast process start: a command that starts
        // the same way and never prompts (reading the same store), run just before, is the baseline,
        // so a loaded machine or a sanitizer slowing hark's start does not count against it. It runs
        // just before and just after, and the slower of the two counts: load comes and goes.
        let before = try detached(["permissions"])
        #expect(before.status == 0, "\(before.standardError)")
        let result = try detached(["record", "-D", "filecap", "-o", output])
        let after = try detached(["permissions"])
        let baseline = max(before.wallSeconds, after.wallSeconds)
        #expect(result.status == 77)
        #expect(result.wallSeconds < baseline + TestLoad.seconds(1),
                "took \(result.wallSeconds) s; 'hark permissions' took \(before.wallSeconds) s before, \(after.wallSeconds) s after")
        #expect(result.errorLines == ["hark: hark has not been allowed to use the microphone and there is no terminal to ask on; allow it with 'hark permissions grant microphone'"])
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(result.standardOutput.isEmpty)
    }

    @Test func helpDevicesPermissionsAndBadArgumentsNeverPrompt() throws {
        let (rig, _) = try undecidedRig()
        for arguments in [["--help"], ["record", "--help"], ["devices"], ["permissions"], ["permissions", "log"],
                          ["record", "-r", "abc", "-o", rig.path("x.flac")], ["record", "-o", rig.path("x.mp3")],
                          ["record", "-o", rig.path("missing/x.flac")]] {
            let result = try TerminalSession(harkCommand(arguments), rig: rig).finish()
            #expect(!result.screen.contains("would like to access"), "\(arguments) prompted")
        }
    }
}
