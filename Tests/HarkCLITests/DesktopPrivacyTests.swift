import AudioFormat
import Foundation
import Testing

/// The desktop's microphone switch (GNOME's Settings › Privacy › Microphone), through the real
/// GSettings schema (gsettings-desktop-schemas) and GLib's keyfile backend in the rig's own
/// config directory, changed with the real `gsettings` tool as the Settings app changes it.
@Suite struct DesktopPrivacySwitchTests {
    static let schemaInstalled = FileManager.default.fileExists(atPath: "/usr/share/glib-2.0/schemas/org.gnome.desktop.privacy.gschema.xml")
        && findOnPath("gsettings") != nil

    /// A rig whose GSettings is the keyfile backend under its own XDG_CONFIG_HOME.
    func rig(input: Data = Data(), grantMicrophone: Bool = true) throws -> ALSATestRig {
        let rig = try ALSATestRig(input: input, grantMicrophone: grantMicrophone)
        rig.extraEnvironment["GSETTINGS_BACKEND"] = "keyfile"
        return rig
    }

    func setSwitch(microphoneDisabled: Bool, _ rig: ALSATestRig) throws {
        let set = try runTool("gsettings", ["set", "org.gnome.desktop.privacy", "disable-microphone", "\(microphoneDisabled)"],
                              environment: rig.environment)
        try #require(set.status == 0, "gsettings set: \(set.standardError)")
    }

    var keyfile: (ALSATestRig) -> String { { $0.path("config/glib-2.0/settings/keyfile") } }

    @Test(.enabled(if: schemaInstalled, "needs gsettings-desktop-schemas and gsettings (scripts/install-deps)"))
    func switchedOffBeforeRecordingIsRestrictedWithNoPromptAndSaysWhereToTurnItOn() throws {
        // Not decided and no terminal: without the switch this would be "no terminal to ask on";
        // restricted comes first, so nobody is asked.
        let rig = try rig(grantMicrophone: false)
        try setSwitch(microphoneDisabled: true, rig)
        let output = rig.path("never.flac")
        let result = try runHark(["record", "-D", "filecap", "-d", "1", "-o", output], rig: rig)
        #expect(result.status == 77, "\(result.standardError)")
        #expect(result.errorLines == ["hark: Microphone access is turned off in the desktop's privacy settings; turn it back on in the desktop's Settings › Privacy › Microphone (org.gnome.desktop.privacy disable-microphone)"])
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(!FileManager.default.fileExists(atPath: rig.accessLogFile))
        let status = String(decoding: try runHark(["permissions"], rig: rig).standardOutput, as: UTF8.self)
        #expect(status.contains("microphone: restricted — turned off in the desktop's privacy settings"), "\(status)")
        #expect(status.contains("systemAudio: not determined"), "the switch is the microphone's only: \(status)")
        #expect(status.contains("\ndesktop microphone switch: off: the microphone is restricted for every app"), "\(status)")

        // Turned back on, the stored decision rules again.
        try setSwitch(microphoneDisabled: false, rig)
        #expect(try runHark(["permissions", "grant", "microphone"], rig: rig).status == 0)
        let allowed = try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", output], rig: rig)
        #expect(allowed.status == 0, "\(allowed.standardError)")
    }

    /// A switch that cannot be read (here: hark copied without its helper) does not restrict, but
    /// the recording says so, even with -q; it said nothing, so the switch's silence passed for
    /// the microphone being on (consent audit).
    @Test(.enabled(if: schemaInstalled, "needs gsettings-desktop-schemas and gsettings (scripts/install-deps)"))
    func aSwitchThatCannotBeReadIsSaidWhenRecording() throws {
        let signal = TestSignal(format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000), frames: 24_000)
        let rig = try rig(input: signal.alsaBytes)
        try setSwitch(microphoneDisabled: true, rig)
        let alone = rig.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
        let copy = alone.appendingPathComponent("hark")
        try FileManager.default.copyItem(at: harkBinary, to: copy)
        let output = rig.path("unswitched.flac")
        let result = try RunningProcess(copy, ["record", "-q", "-D", "filecap", "-d", "0.5", "-o", output],
                                        environment: rig.environment, scratch: rig.directory).wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.errorLines == ["hark: warning: the desktop's microphone switch cannot be read "
            + "(hark-privacy-switch is not installed beside hark); recording without it"])
        // With its helper, the same switch (off) restricts.
        #expect(try runHark(["record", "-q", "-D", "filecap", "-d", "0.5", "-o", output], rig: rig).status == 77)
    }

    @Test(.enabled(if: schemaInstalled, "needs gsettings-desktop-schemas and gsettings (scripts/install-deps)"))
    func switchedOffDuringARecordingStopsItWithinASecondWithAFinishedFile() throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 12 * 48_000)
        let rig = try rig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        try setSwitch(microphoneDisabled: false, rig)
        let output = rig.path("switched.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        try setSwitch(microphoneDisabled: true, rig)
        let result = recording.wait(timeout: 10)
        #expect(result.status == 77, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: microphone access was turned off in the desktop's privacy settings; the recording was stopped and finalized")
        // As `revocationStopDelay` times it: the keyfile's change (gsettings writes a new file
        // and renames it into place) to the last sample recorded.
        let reaction = try lastSampleTime(flac: output) - changeTime(of: keyfile(rig))
        print("DesktopPrivacySwitchTests: the last sample recorded \(reaction) s after the switch")
        #expect(reaction < 1, "the capture went on \(reaction) s after the switch")
        #expect(try FLACTools.test(output).status == 0)
        let frames = try #require(try FLACTools.totalSamples(output))
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        #expect(frames >= 48_000)
        expectSameElements(decoded[...], signal.prefix(frames: frames))
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        #expect(log.contains("\"ended\":\"revoked\""), "\(log)")
    }

    /// A helper killed during a recording (the OOM killer, a `pkill`) left the switch as last read,
    /// so turning it off afterwards went unseen and the recording went on (consent review,
    /// 2026-11-28). hark starts the helper again, and the switch still stops the recording.
    @Test(.enabled(if: schemaInstalled, "needs gsettings-desktop-schemas and gsettings (scripts/install-deps)"))
    func aHelperKilledDuringARecordingIsStartedAgainAndTheSwitchStillStopsIt() throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 20 * 48_000)
        let rig = try rig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        try setSwitch(microphoneDisabled: false, rig)
        let output = rig.path("helper-killed.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        let killed = try #require(Self.switchHelpers(of: recording.pid).first, "no hark-privacy-switch under hark")
        kill(killed, SIGKILL)
        let deadline = Date().addingTimeInterval(TestLoad.seconds(10))
        while !Self.switchHelpers(of: recording.pid).contains(where: { $0 != killed }), Date() < deadline { usleep(20_000) }
        #expect(Self.switchHelpers(of: recording.pid).contains { $0 != killed }, "the helper was not started again")
        try setSwitch(microphoneDisabled: true, rig)
        let result = recording.wait(timeout: TestLoad.seconds(10))
        #expect(result.status == 77, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: microphone access was turned off in the desktop's privacy settings; the recording was stopped and finalized")
        #expect(!result.standardError.contains("warning"), "one restart is not a switch that cannot be read: \(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
    }

    /// `pid`'s child processes that are the desktop switch's helper (a killed one until reaped).
    static func switchHelpers(of pid: pid_t) -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { pid_t($0) }
        }.filter { child in
            ((try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8)) ?? "").hasPrefix("hark-privacy")
        }
    }

    @Test(.enabled(if: schemaInstalled, "needs gsettings-desktop-schemas and gsettings (scripts/install-deps)"))
    func whereTheSchemaIsNotInstalledNothingChanges() throws {
        let rig = try rig()
        try setSwitch(microphoneDisabled: true, rig)
        // The same keyfile saying "off", read by a hark that finds no schemas at all: there is no
        // such switch on that machine, so the stored grant holds.
        let noSchemas = rig.path("empty-data-dir")
        try FileManager.default.createDirectory(atPath: noSchemas, withIntermediateDirectories: true)
        rig.extraEnvironment["XDG_DATA_DIRS"] = noSchemas
        let status = String(decoding: try runHark(["permissions"], rig: rig).standardOutput, as: UTF8.self)
        #expect(status.hasPrefix("microphone: authorized"), "\(status)")
        #expect(status.contains("\ndesktop microphone switch: none on this desktop\n"), "\(status)")
        let result = try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("x.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
    }
}

/// Recording what the system plays (a sound server's monitor source) is a permission of its own,
/// `systemAudio`, as Apple split System Audio Recording from the microphone: neither grant covers
/// the other, however the monitor is named.
@Suite struct SystemAudioPermissionTests {
    /// A rig with a PulseAudio whose default source is its sink's monitor (`vmic.monitor`), a
    /// microphone `yeti`, and the microphone granted.
    func rig() throws -> ALSATestRig {
        let rig = try ALSATestRig(input: Data())
        try rig.startPulseAudio()
        let loaded = try runTool("pactl", ["load-module", "module-null-source", "source_name=yeti", "description='Blue Yeti Studio'"],
                                 environment: rig.environment)
        try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
        return rig
    }

    @Test func aMonitorNeedsTheSystemAudioGrantAndTheMicrophoneGrantDoesNotCoverIt() throws {
        let rig = try rig()
        let output = rig.path("monitor.flac")
        // Every way of naming the monitor: its name, ALSA's plugin with the name, with the
        // server's index of it, with the server's name for the default sink's monitor, and the
        // plugin's default while the default source is the monitor, and those through ALSA's `plug`
        // converter. (The index and @DEFAULT_MONITOR@ recorded the monitor on the microphone's
        // grant until 2026-11-26, `plug:pulse` until 2026-11-27.)
        let sources = try runTool("pactl", ["list", "short", "sources"], environment: rig.environment)
        let sourceLines: [[Substring]] = String(decoding: sources.standardOutput, as: UTF8.self).split(separator: "\n")
            .map { $0.split(separator: "\t") }
        let monitorLine = try #require(sourceLines.first { $0.count > 1 && $0[1] == "vmic.monitor" }, "\(sourceLines)")
        let monitorIndex: Substring = monitorLine[0]
        for device in ["vmic.monitor", "pulse:DEVICE=vmic.monitor", "pulse:\"vmic.monitor\"", "pulse:DEVICE=\(monitorIndex)",
                       "pulse:@DEFAULT_MONITOR@", "pulse", "plug:pulse", "plug:\"pulse:DEVICE=vmic.monitor\"", "plug:SLAVE=pulse"] {
            let refused = try runHark(["record", "-D", device, "-d", "0.5", "-o", output], rig: rig)
            #expect(refused.status == 77, "\(device): \(refused.standardError)")
            #expect(refused.errorLines == ["hark: hark has not been allowed to use the system's audio (what this computer plays) and there is no terminal to ask on; allow it with 'hark permissions grant systemAudio'"],
                    "\(device)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        #expect(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        #expect(try runHark(["permissions", "deny", "microphone"], rig: rig).status == 0)
        let recorded = try runHark(["record", "-D", "vmic.monitor", "-d", "0.5", "-o", output], rig: rig)
        #expect(recorded.status == 0, "\(recorded.standardError)")
        #expect(try FLACTools.totalSamples(output) == 24_000)
        // …and the system-audio grant does not cover the microphone.
        let microphone = try runHark(["record", "-D", "yeti", "-d", "0.5", "-o", rig.path("mic.flac")], rig: rig)
        #expect(microphone.status == 77 && microphone.standardError.contains("grant microphone"), "\(microphone.standardError)")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        #expect(log.split(separator: "\n").filter { !$0.contains("\"event\"") }.count == 1 && log.contains("\"resource\":\"systemAudio\""), "\(log)")
        let status = String(decoding: try runHark(["permissions"], rig: rig).standardOutput, as: UTF8.self)
        #expect(status.contains("systemAudio: authorized") && status.contains("microphone: denied"), "\(status)")
    }

    /// A user's own ALSA definitions that lead to the server's pulse plugin: one naming the
    /// monitor, and a `plug`, a `route` and ALSA's `plug:` converter in front of it, need the
    /// system-audio grant (they recorded what the system plays on the microphone's, consent audit);
    /// one naming the microphone, and one for the server's default source (here the monitor),
    /// likewise by what they reach. A `file` plugin reading its `infile` (the rig's `pacedcap`,
    /// paced by the pulse plugin behind it) records its file, on the microphone's grant.
    @Test func anALSADefinitionLeadingToAMonitorNeedsTheSystemAudioGrant() throws {
        let rig = try rig()
        try rig.appendConfiguration("""
            pcm.mon { type pulse; device "vmic.monitor" }
            pcm.plugmon { type plug; slave.pcm "mon" }
            pcm.routemon { type route; slave { pcm "mon"; channels 2 }; ttable.0.0 1; ttable.1.1 1 }
            pcm.serverdefault { type plug; slave.pcm { type pulse } }
            pcm.mic { type plug; slave.pcm { type pulse; device "yeti" } }
            pcm.pwsink { type plug; slave.pcm { type pipewire; capture_node "vmic" } }
            pcm.pwdefault { type pipewire; capture_node "-1" }
            """)
        let output = rig.path("monitor.flac")
        // PipeWire's plugin (not installed here: only the consent is looked at before it fails to
        // open): a sink's node records its monitor; its default node (-1, as pipewire-alsa's own
        // definition passes it) is the default source, here the monitor too.
        for device in ["mon", "plugmon", "routemon", "plug:mon", "serverdefault", "pwsink", "pwdefault"] {
            let refused = try runHark(["record", "-D", device, "-d", "0.5", "-o", output], rig: rig)
            #expect(refused.status == 77, "\(device): \(refused.standardError)")
            #expect(refused.errorLines.last?.contains("grant systemAudio") == true, "\(device): \(refused.standardError)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        let microphone = try runHark(["record", "-D", "mic", "-d", "0.5", "-o", rig.path("mic.flac")], rig: rig)
        #expect(microphone.status == 0, "\(microphone.standardError)")
        // With the microphone the default source, PipeWire's default node is a microphone: asked
        // for no system-audio grant (the plugin, not installed, then fails to open).
        #expect(try runTool("pactl", ["set-default-source", "yeti"], environment: rig.environment).status == 0)
        let pipeWireDefault = try runHark(["record", "-D", "pwdefault", "-d", "0.5", "-o", rig.path("pw.flac")], rig: rig)
        #expect(pipeWireDefault.status != 77 && !pipeWireDefault.standardError.contains("systemAudio"), "\(pipeWireDefault.standardError)")
        #expect(try runTool("pactl", ["set-default-source", "vmic.monitor"], environment: rig.environment).status == 0)
        #expect(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        let recorded = try runHark(["record", "-D", "plugmon", "-d", "0.5", "-o", output], rig: rig)
        #expect(recorded.status == 0, "\(recorded.standardError)")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        let entries = log.split(separator: "\n").filter { !$0.contains("\"event\"") }
        #expect(entries.count == 2 && entries.last?.contains("\"resource\":\"systemAudio\"") == true
                && entries.first?.contains("\"resource\":\"systemAudio\"") == false, "\(log)")
    }

    @Test func denyingSystemAudioStopsAMonitorRecordingAndDenyingTheMicrophoneDoesNot() throws {
        let rig = try rig()
        #expect(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        let output = rig.path("monitor.flac")
        let recording = try startHark(["record", "-D", "vmic.monitor", "-d", "20", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 0.5)
        #expect(try runHark(["permissions", "deny", "microphone"], rig: rig).status == 0)
        // Two watch periods at least: the microphone's deny must not have stopped it.
        let secondsBefore = FLACProgress.seconds(in: [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))) ?? 0
        try OutputGrowth.waitForFLACAudio(output, seconds: secondsBefore + 1.2)
        #expect(try runHark(["permissions", "deny", "systemAudio"], rig: rig).status == 0)
        let result = recording.wait(timeout: 15)
        #expect(result.status == 77, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: system-audio access was revoked; the recording was stopped and finalized")
        #expect(try FLACTools.test(output).status == 0)
    }
}
