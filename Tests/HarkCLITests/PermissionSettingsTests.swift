import AudioFormat
import Foundation
import Testing

/// `hark permissions` as the Settings pane, the administrator's restriction, and a store that
/// must never grant when it cannot be trusted.
@Suite struct PermissionSettingsTests {
    private func permissions(_ arguments: [String], _ rig: ALSATestRig) throws -> ToolResult {
        try runHark(["permissions"] + arguments, rig: rig)
    }

    private func statusText(_ rig: ALSATestRig) throws -> String {
        String(decoding: try permissions([], rig).standardOutput, as: UTF8.self)
    }

    private func record(_ rig: ALSATestRig) throws -> ToolResult {
        try runHark(["record", "-D", "filecap", "-d", "0.1", "-o", rig.path("take.flac")], rig: rig)
    }

    @Test func grantDenyResetAndStatusRoundTrip() throws {
        let rig = try ALSATestRig(input: Data(count: 48_000), grantMicrophone: false)
        // No GSettings schemas: the desktop switch's line does not depend on this machine's desktop.
        rig.extraEnvironment["XDG_DATA_DIRS"] = rig.directory.path
        #expect(try statusText(rig) == """
            microphone: not determined (hark will ask on the terminal at the next recording)
            systemAudio: not determined (hark will ask on the terminal at the next recording of system audio (a monitor source))
            recordings: not determined (hark will ask on the terminal at the next recording saved to the library)
            desktop microphone switch: none on this desktop

            """)
        #expect(try permissions(["grant", "microphone"], rig).status == 0)
        #expect(try statusText(rig).hasPrefix("microphone: authorized (with 'hark permissions' on 20"))
        #expect(try record(rig).status == 0)
        #expect(try permissions(["deny", "microphone"], rig).status == 0)
        #expect(try statusText(rig).hasPrefix("microphone: denied (with 'hark permissions' on 20"))
        let denied = try record(rig)
        #expect(denied.status == 77)
        #expect(denied.errorLines.count == 1 && denied.standardError.contains("allow it with 'hark permissions grant microphone'"))
        #expect(try permissions(["reset", "microphone"], rig).status == 0)
        #expect(try statusText(rig).contains("not determined"))
        #expect(try permissions(["status"], rig).status == 0, "status is also a named subcommand")
    }

    @Test func storeIsPrivateAndWrittenWholeWithNoTemporaryLeftBehind() throws {
        let rig = try ALSATestRig(input: Data())
        var info = stat()
        #expect(lstat(rig.storeFile, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let directory = (rig.storeFile as NSString).deletingLastPathComponent
        #expect(lstat(directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names.filter { $0.hasSuffix(".tmp") }.isEmpty, "\(names)")
    }

    @Test func aRestrictionForEveryoneBeatsAUserGrantAndCannotBeChanged() throws {
        let rig = try ALSATestRig(input: Data(count: 48_000))
        try writePolicy(#"{"microphone": {"restricted": true}}"#, rig)
        let result = try record(rig)
        #expect(result.status == 77)
        #expect(result.errorLines == ["hark: Microphone access is restricted by the administrator (\(rig.systemDirectory.path)/policy.json)"])
        let restrictedStatus = try statusText(rig)
        #expect(restrictedStatus.hasPrefix("microphone: restricted by the administrator ("), "the word once: \(restrictedStatus)")
        let grant = try permissions(["grant", "microphone"], rig)
        #expect(grant.status == 77 && grant.standardError.contains("cannot be changed"))
        // Each resource by the name it has in hark's other lines (until 2026-11-29 "SystemAudio access").
        let denySystemAudio = try permissions(["deny", "systemAudio"], rig)
        #expect(denySystemAudio.status == 77)
        #expect(denySystemAudio.errorLines == ["hark: System-audio access is restricted by the administrator "
                                               + "(\(rig.systemDirectory.path)/policy.json); it cannot be changed"], "\(denySystemAudio.standardError)")
        // No prompt either, even on a terminal; the reset does not promise one.
        let reset = try permissions(["reset", "microphone"], rig)
        reset.expectSuccess()
        #expect(reset.errorLines == ["hark: microphone reset for dev.hark.cli; microphone stays restricted, so nothing will ask"])
        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "0.1", "-o", rig.path("t.flac")]), rig: rig)
        let onTerminal = session.finish()
        #expect(onTerminal.status == 77)
        #expect(!onTerminal.screen.contains(promptQuestion))
    }

    /// A restriction made while recording stops it, and the last line says by whom.
    @Test func aRestrictionWhileRecordingStopsItAndSaysSo() throws {
        let rig = try ALSATestRig(input: TestSignal(format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000),
                                                    frames: 12 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("restricted.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        try writePolicy(#"{"microphone": {"restricted": true}}"#, rig)
        let result = recording.wait(timeout: 10)
        #expect(result.status == 77)
        #expect(result.errorLines.last == "hark: microphone access was restricted by the administrator (\(rig.systemDirectory.path)/policy.json); "
                + "the recording was stopped and finalized", "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
    }

    /// A policy that is a symbolic link into a configuration-management checkout changes in the
    /// checkout's folder: that is watched too. Without a status line (stderr not a terminal) nothing
    /// else woke the session, and the recording ran on restricted.
    @Test func aRestrictionThroughALinkedPolicyStopsARecordingWithoutAStatusLine() throws {
        let rig = try ALSATestRig(input: TestSignal(format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000),
                                                    frames: 12 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        let checkout = rig.directory.appendingPathComponent("managed")
        try FileManager.default.createDirectory(at: checkout, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: rig.systemDirectory, withIntermediateDirectories: true)
        try "{}".write(to: checkout.appendingPathComponent("policy.json"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: rig.systemDirectory.appendingPathComponent("policy.json").path,
                                                   withDestinationPath: checkout.appendingPathComponent("policy.json").path)
        let output = rig.path("linked.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "10", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        try #"{"microphone": {"restricted": true}}"#.write(to: checkout.appendingPathComponent("policy.json"), atomically: true, encoding: .utf8)
        let result = recording.wait(timeout: 20)
        #expect(result.status == 77 && result.standardError.contains("microphone access was restricted by the administrator"),
                "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
    }

    @Test func aRestrictionForListedAppsAppliesOnlyToThem() throws {
        let rig = try ALSATestRig(input: Data(count: 48_000))
        try writePolicy(#"{"microphone": {"restricted": ["org.example.other"]}}"#, rig)
        #expect(try record(rig).status == 0)
        try writePolicy(#"{"microphone": {"restricted": ["org.example.other", "dev.hark.cli"]}}"#, rig)
        let result = try record(rig)
        #expect(result.status == 77 && result.standardError.contains("restricted by the administrator for dev.hark.cli"))
    }

    @Test func aPolicyThatCannotBeReadFailsClosed() throws {
        let rig = try ALSATestRig(input: Data(count: 48_000))
        try writePolicy("{ not json", rig)
        let result = try record(rig)
        #expect(result.status == 77 && result.standardError.contains("is not valid"), "\(result.standardError)")
        let status = try statusText(rig)
        #expect(status.hasPrefix("microphone: restricted: the administrator's policy "), "\(status)")
    }

    /// A reset of one resource repairs an untrusted store by removing it, which forgets every
    /// decision: the line says so rather than naming the one resource.
    @Test func resettingOneResourceOfAnUntrustedStoreSaysEveryDecisionWent() throws {
        let rig = try ALSATestRig(input: Data(count: 48_000))
        try permissions(["grant", "systemAudio"], rig).expectSuccess()
        try Data("{".utf8).write(to: URL(fileURLWithPath: rig.storeFile))
        let reset = try permissions(["reset", "systemAudio"], rig)
        reset.expectSuccess()
        #expect(reset.errorLines == ["hark: dev.hark.cli's permission store could not be trusted, so it was removed: every decision is reset, "
                                     + "not only systemAudio's; the next recording will ask"])
        let status = try statusText(rig)
        #expect(status.contains("microphone: not determined") && status.contains("systemAudio: not determined"), "\(status)")
        // A trusted store keeps the others.
        try permissions(["grant", "microphone"], rig).expectSuccess()
        try permissions(["grant", "systemAudio"], rig).expectSuccess()
        #expect(try permissions(["reset", "systemAudio"], rig).errorLines == ["hark: systemAudio reset for dev.hark.cli; the next recording will ask"])
        #expect(try statusText(rig).contains("microphone: authorized"))
    }

    struct Attack: Sendable, CustomTestStringConvertible {
        let name: String
        let says: String
        var testDescription: String { name }
    }

    static let attacks: [Attack] = [
        Attack(name: "corrupt JSON", says: "is corrupt"),
        Attack(name: "empty file", says: "is empty"),
        Attack(name: "10 MB file", says: "is too large"),
        Attack(name: "symlink to another file", says: "is a symbolic link"),
        Attack(name: "mode 0666", says: "is writable by other users (mode 666)"),
        Attack(name: "directory in place of the file", says: "is not a regular file"),
        Attack(name: "owned by another user", says: "is owned by another user (uid 4242)"),
        Attack(name: "another app's record", says: "belongs to another app"),
    ]

    @Test(arguments: attacks)
    func anUntrustedStoreNeverGrantsAndResetRepairsIt(_ attack: Attack) throws {
        let rig = try ALSATestRig(input: Data(count: 48_000))
        let store = rig.storeFile
        let authorized = try String(contentsOfFile: store, encoding: .utf8)
        try FileManager.default.removeItem(atPath: store)
        switch attack.name {
        case "corrupt JSON": try Data(authorized.utf8.dropLast(20)).write(to: URL(fileURLWithPath: store))
        case "empty file": try Data().write(to: URL(fileURLWithPath: store))
        case "10 MB file": try Data(repeating: 0x20, count: 10_000_000).write(to: URL(fileURLWithPath: store))
        case "symlink to another file":
            let elsewhere = rig.path("authorized-elsewhere.json")
            try authorized.write(toFile: elsewhere, atomically: true, encoding: .utf8)
            chmod(elsewhere, 0o600)
            try FileManager.default.createSymbolicLink(atPath: store, withDestinationPath: elsewhere)
        case "mode 0666":
            try authorized.write(toFile: store, atomically: true, encoding: .utf8)
            chmod(store, 0o666)
        case "directory in place of the file":
            try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
        case "owned by another user":
            try authorized.write(toFile: store, atomically: true, encoding: .utf8)
            chmod(store, 0o600)
            try #require(chown(store, 4242, 4242) == 0, "giving a file to another user needs root (CI runs as root)")
        default:
            try authorized.replacingOccurrences(of: "dev.hark.cli", with: "org.example.other")
                .write(toFile: store, atomically: true, encoding: .utf8)
            chmod(store, 0o600)
        }

        let result = try record(rig)
        #expect(result.status == 77, "\(result.standardError)")
        #expect(result.errorLines.count == 1)
        #expect(result.standardError.contains(attack.says), "\(result.standardError)")
        #expect(result.standardError.contains("run 'hark permissions reset' to fix it"))
        #expect(try statusText(rig).hasPrefix("microphone: denied — the permission store"))
        #expect(try permissions(["grant", "microphone"], rig).status == 77, "a damaged store is repaired by reset, not overwritten")

        try permissions(["reset"], rig).expectSuccess()
        #expect(try statusText(rig).contains("not determined"))
        if attack.name == "symlink to another file" {
            #expect(FileManager.default.fileExists(atPath: rig.path("authorized-elsewhere.json")), "reset removes the link, not its target")
        }
        try permissions(["grant", "microphone"], rig).expectSuccess()
        #expect(try record(rig).status == 0)
    }

    /// A file where hark's settings folder should be (`~/.config/hark`) is not hark's to remove:
    /// every line names it and says what to do, rather than sending the user to a reset that
    /// cannot mend it.
    @Test func aFileInPlaceOfTheSettingsFolderIsNamedNotResetAway() throws {
        let rig = try ALSATestRig(input: Data(count: 48_000), grantMicrophone: false)
        let settingsFolder = rig.directory.appendingPathComponent("config/hark").path
        try FileManager.default.createDirectory(atPath: (settingsFolder as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: settingsFolder))
        let advice = "'\(settingsFolder)' is not a folder, and hark keeps its permissions in '\(settingsFolder)/permissions': move it aside"

        let recording = try record(rig)
        #expect(recording.status == 77)
        #expect(recording.errorLines.allSatisfy { $0.hasSuffix(advice) }, "\(recording.standardError)")
        #expect(!recording.standardError.contains("reset"), "\(recording.standardError)")
        #expect(try statusText(rig).components(separatedBy: "\n").prefix(3).allSatisfy { $0.hasSuffix(advice) })
        let reset = try permissions(["reset"], rig)
        #expect(reset.status == 77)
        #expect(reset.errorLines.count == 1 && reset.standardError.contains(advice), "\(reset.standardError)")
        #expect(FileManager.default.contents(atPath: settingsFolder) == Data("notes\n".utf8), "the user's file is left as it was")

        try FileManager.default.moveItem(atPath: settingsFolder, toPath: settingsFolder + ".aside")
        try permissions(["grant", "microphone"], rig).expectSuccess()
        #expect(try record(rig).status == 0)
    }

    /// A decision that cannot be written (a full or read-only disk) says so in one line, with
    /// the disk's own words, and exit 74; not "cannot be written: cannot be read", exit 77 and a
    /// reset that cannot help.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func aDecisionTheDiskCannotTakeSaysSoAndExits74() throws {
        let rig = try ALSATestRig(input: Data(count: 48_000), grantMicrophone: false)
        try rig.withSmallDisk(size: "1m") { mountPoint in
            rig.extraEnvironment["XDG_CONFIG_HOME"] = mountPoint + "/config"
            let store = mountPoint + "/config/hark/permissions/dev.hark.cli.json"
            try permissions(["grant", "microphone"], rig).expectSuccess()
            try fillDisk(mountPoint)
            let deny = try permissions(["deny", "microphone"], rig)
            #expect(deny.status == 74)
            #expect(deny.errorLines == ["hark: the permission store \(store) cannot be written (No space left on device)"], "\(deny.standardError)")
            // Every decision, on the full disk: removing the store file made room for one stamp and
            // not the next, and the reset failed with the decision gone (until 2026-11-29).
            let fullReset = try permissions(["reset"], rig)
            #expect(fullReset.status == 74)
            #expect(fullReset.errorLines.count == 1 && fullReset.standardError.contains("No space left on device"), "\(fullReset.standardError)")
            #expect(try statusText(rig).hasPrefix("microphone: authorized"), "the decision stands as it was")
            try FileManager.default.removeItem(atPath: mountPoint + "/filler")
            #expect(try runTool("mount", ["-o", "remount,ro", mountPoint]).status == 0)
            defer { _ = try? runTool("mount", ["-o", "remount,rw", mountPoint]) }
            let reset = try permissions(["reset"], rig)
            #expect(reset.status == 74)
            #expect(reset.errorLines.count == 1 && reset.standardError.contains("Read-only file system")
                    && !reset.standardError.contains("reset' to fix"), "\(reset.standardError)")
            #expect(try statusText(rig).hasPrefix("microphone: authorized"), "the decision stands as it was")
        }
    }

    @Test func aHundredConcurrentWritersLeaveAParseableStore() throws {
        let rig = try ALSATestRig(input: Data(count: 48_000))
        // A hundred writers, at most eight at a time: enough to contend for the store's lock on two
        // cores, without a hundred processes (sanitized ones, under ASan) starving every other test.
        let inFlight = 8
        var running: [RunningProcess] = []
        var statuses: [Int32] = []
        let deadline = Date().addingTimeInterval(TestLoad.seconds(120))
        for index in 0..<100 {
            while running.count == inFlight {
                if let done = running.firstIndex(where: { !$0.process.isRunning }) {
                    statuses.append(running.remove(at: done).wait().status)
                } else if Date() > deadline {
                    statuses.append(running.removeFirst().wait(timeout: 0).status)  // killed: a hung writer fails the test
                } else {
                    usleep(2_000)
                }
            }
            running.append(try startHark(["permissions", index % 2 == 0 ? "grant" : "deny", "microphone"], rig: rig))
        }
        statuses += running.map { $0.wait(timeout: TestLoad.seconds(60)).status }
        #expect(statuses.count == 100)
        #expect(statuses.allSatisfy { $0 == 0 }, "\(statuses)")
        let text = try statusText(rig)
        #expect(text.hasPrefix("microphone: authorized (with") || text.hasPrefix("microphone: denied (with"), "\(text)")
        let directory = (rig.storeFile as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".tmp") }.isEmpty)
    }

    private func writePolicy(_ text: String, _ rig: ALSATestRig) throws {
        try FileManager.default.createDirectory(at: rig.systemDirectory, withIntermediateDirectories: true)
        try text.write(to: rig.systemDirectory.appendingPathComponent("policy.json"), atomically: true, encoding: .utf8)
    }
}

extension ToolResult {
    func expectSuccess(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(status == 0, "\(standardError)", sourceLocation: sourceLocation)
    }
}

/// The sample app in samples/VoiceMemo embeds the gate with its own identity.
@Suite struct EmbeddedGateSampleTests {
    @Test func aSecondAppHasItsOwnDecisionPromptAndLogLines() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 1, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)  // hark itself is allowed...
        let voiceMemo = harkBinary.deletingLastPathComponent().appendingPathComponent("voice-memo")
        let output = rig.path("memo.flac")
        let detached = try RunningProcess(URL(fileURLWithPath: findOnPath("setsid") ?? "/usr/bin/setsid"),
                                          ["-w", voiceMemo.path, "-D", "filecap", "1", output],
                                          environment: rig.environment, scratch: rig.directory).wait()
        // ...but Voice Memo is not: it must ask, and there is no terminal.
        #expect(detached.status == 77)
        #expect(detached.standardError.contains("hark permissions grant microphone --app org.example.voicememo"))

        let session = try TerminalSession(
            ([voiceMemo.path, "-D", "filecap", "1", output]).map(shellQuoted).joined(separator: " "), rig: rig)
        #expect(session.waitFor(promptQuestion))
        #expect(session.screen.contains("“Voice Memo” would like to access the microphone."))
        #expect(session.screen.contains("“Voice Memo records the short spoken note you ask for"))
        session.type("a\n")
        #expect(session.finish().status == 0)
        try expectSameElements(FLACTools.decode(output, bitsPerSample: 16), signal.samples)

        let status = String(decoding: try runHark(["permissions", "--app", "org.example.voicememo"], rig: rig).standardOutput,
                            as: UTF8.self)
        #expect(status.hasPrefix("microphone: authorized (at the prompt"))
        let log = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
        #expect(log.contains("org.example.voicememo"))
        // Its line names the file from the root, and carries the id of the start it logged first.
        let json = String(decoding: try runHark(["permissions", "log", "--json"], rig: rig).standardOutput, as: UTF8.self)
        let line = try #require(json.split(separator: "\n").first { $0.contains("org.example.voicememo") }, "\(json)")
        #expect(line.contains("\"output\":\"\(output)\"") && line.contains("\"id\":"), "\(line)")
        // It writes FLAC only, so another name is refused before anything is asked or opened.
        let misnamed = try RunningProcess(voiceMemo, ["-D", "filecap", "1", rig.path("memo.opus")],
                                          environment: rig.environment, scratch: rig.directory).wait()
        #expect(misnamed.status == 64 && !FileManager.default.fileExists(atPath: rig.path("memo.opus")), "\(misnamed.standardError)")
        #expect(try runHark(["permissions", "deny", "microphone", "--app", "org.example.voicememo"], rig: rig).status == 0)
        #expect(try runHark(["record", "-D", "filecap", "-c", "1", "-d", "1", "-o", rig.path("hark.flac")], rig: rig).status == 0,
                "denying Voice Memo leaves hark allowed")
    }
}
