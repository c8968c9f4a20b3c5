import Foundation
import Testing

/// A recording from the sound server stays on the source the user was asked about: nobody on the
/// session can move its stream (to a monitor, recording what the system plays on the microphone's
/// grant, or to another microphone), the server does not move it when that source goes away (the
/// recording ends as from an unplugged device), and a default source that became a monitor while
/// the consent prompt waited is not recorded. Before 2026-11-26 `pactl move-source-output` moved a
/// microphone recording onto a monitor and hark went on recording it.
@Suite struct SourceStaysPutTests {
    /// A private PulseAudio with the microphones `yeti` and `usbmic` besides its sink's monitor
    /// `vmic.monitor` (the default source); the module index of `yeti`'s.
    func rig(grantMicrophone: Bool = true) throws -> (rig: ALSATestRig, yetiModule: String) {
        let rig = try ALSATestRig(input: Data(), grantMicrophone: grantMicrophone)
        try rig.startPulseAudio()
        var yetiModule = ""
        for (name, description) in [("yeti", "Blue Yeti Studio"), ("usbmic", "USB Headset Microphone")] {
            let loaded = try runTool("pactl", ["load-module", "module-null-source", "source_name=\(name)", "description='\(description)'"],
                                     environment: rig.environment)
            try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
            if name == "yeti" { yetiModule = String(decoding: loaded.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        return (rig, yetiModule)
    }

    /// hark's record stream as `pactl list short source-outputs` gives it: its index and the index
    /// of the source it records from (the rig's loopback has one too, from module-loopback.c).
    static func harksStream(_ rig: ALSATestRig) throws -> (index: String, source: String) {
        let listing = try runTool("pactl", ["list", "short", "source-outputs"], environment: rig.environment)
        let fields = String(decoding: listing.standardOutput, as: UTF8.self).split(separator: "\n")
            .map { $0.split(separator: "\t").map(String.init) }
            .filter { $0.count > 2 && $0[2] != "-" && !$0.contains("module-loopback.c") }
        try #require(fields.count == 1, "one client stream: \(fields)")
        return (fields[0][0], fields[0][1])
    }

    static func sourceIndex(_ name: String, _ rig: ALSATestRig) throws -> String {
        let listing = try runTool("pactl", ["list", "short", "sources"], environment: rig.environment)
        let line = String(decoding: listing.standardOutput, as: UTF8.self).split(separator: "\n")
            .map { $0.split(separator: "\t").map(String.init) }.first { $0.count > 1 && $0[1] == name }
        return try #require(line?[0], "no source \(name)")
    }

    /// hark recording `-D mic`, a user's definition over the server's plugin (`pcm.mic { type
    /// pulse; device "yeti" }`), into `name`, once its first FLAC audio is written.
    static func recordThroughADefinitionOfYeti(_ rig: ALSATestRig, into name: String) throws -> (RunningProcess, String) {
        try rig.appendConfiguration(#"pcm.mic { type pulse; device "yeti" }"#)
        let output = rig.path(name)
        let recording = try startHark(["record", "-D", "mic", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 0.2)
        return (recording, output)
    }

    @Test func nobodyCanMoveTheStreamToAMonitorOrAnotherMicrophone() throws {
        let (rig, _) = try rig()
        let output = rig.path("stays.flac")
        let recording = try startHark(["record", "-D", "yeti", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 0.2)
        let stream = try Self.harksStream(rig)
        #expect(stream.source == (try Self.sourceIndex("yeti", rig)))
        for target in ["vmic.monitor", "usbmic"] {
            let moved = try runTool("pactl", ["move-source-output", stream.index, target], environment: rig.environment)
            #expect(moved.status != 0, "moved onto \(target)")
        }
        #expect(try Self.harksStream(rig).source == (try Self.sourceIndex("yeti", rig)))
        recording.send(SIGINT)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
    }

    /// An ALSA definition of the user's over the server's plugin is recorded through the plugin's
    /// own stream, which can be moved: to another microphone the recording goes on; to a monitor
    /// (what the system plays, on the microphone's grant) it stops as a revocation does, finalized.
    /// Until 2026-11-28 it recorded the monitor on.
    @Test func thePluginsStreamMovedToAMonitorStopsTheRecording() throws {
        let (rig, _) = try rig()
        let (recording, output) = try Self.recordThroughADefinitionOfYeti(rig, into: "moved.flac")
        let stream = try Self.harksStream(rig)
        #expect(stream.source == (try Self.sourceIndex("yeti", rig)))
        #expect(try runTool("pactl", ["move-source-output", stream.index, "usbmic"], environment: rig.environment).status == 0)
        usleep(1_500_000)  // three of the session's checks: another microphone is no reason to stop
        #expect(recording.process.isRunning, "stopped on a move to another microphone")
        #expect(try runTool("pactl", ["move-source-output", stream.index, "vmic.monitor"], environment: rig.environment).status == 0)
        let result = recording.wait(timeout: TestLoad.seconds(10))
        #expect(result.status == 77, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: the recording's stream was moved to what the system plays ('vmic.monitor'), "
            + "which needs system-audio access; the recording was stopped and finalized", "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
    }

    /// A server that stalls past the stream watch's wait (200 ms, twice a second) answers the
    /// questions hark gave up on once it runs again. Until 2026-11-29 hark let go of those
    /// questions without cancelling them (`pa_operation_cancel`), and the late answers called back
    /// into the collectors already freed (heap-use-after-free under AddressSanitizer). Now the
    /// recording goes on and the watch still sees a move to a monitor.
    @Test func lateAnswersFromAStalledServerAreLetGo() throws {
        let (rig, _) = try rig()
        let (recording, output) = try Self.recordThroughADefinitionOfYeti(rig, into: "stalled.flac")
        let server = try #require(rig.pulse?.pid)
        // Two checks or more time out while the server is stopped; its answers come after SIGCONT.
        #expect(kill(server, SIGSTOP) == 0)
        usleep(1_200_000)
        #expect(kill(server, SIGCONT) == 0)
        usleep(1_500_000)  // three checks more: the late answers arrive and are dispatched
        #expect(recording.process.isRunning, "\(recording.process.isRunning ? "" : recording.wait(timeout: 1).standardError)")
        let stream = try Self.harksStream(rig)
        #expect(try runTool("pactl", ["move-source-output", stream.index, "vmic.monitor"], environment: rig.environment).status == 0)
        let result = recording.wait(timeout: TestLoad.seconds(10))
        #expect(result.status == 77, "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
    }

    /// With module-rescue-streams loaded (PulseAudio's default configuration loads it), a movable
    /// stream whose source went away was moved to another source and the recording went on from it.
    @Test func aSourceThatGoesAwayEndsTheRecordingWithAFinishedFile() throws {
        let (rig, yetiModule) = try rig()
        try #require(try runTool("pactl", ["load-module", "module-rescue-streams"], environment: rig.environment).status == 0)
        let output = rig.path("unplugged.flac")
        let recording = try startHark(["record", "-D", "yeti", "-d", "60", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 0.5)
        try #require(try runTool("pactl", ["unload-module", yetiModule], environment: rig.environment).status == 0)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.errorLines.last?.hasPrefix("hark: capture device lost") == true, "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
        let frames = try #require(try FLACTools.totalSamples(output))
        #expect(frames >= 24_000 && frames < 60 * 48_000, "\(frames) frames")
    }

    /// An ALSA definition that reaches a sound server's default source is looked up on the server
    /// it names (its `server`), not on the user's: there the default is a monitor, which needs
    /// system-audio access. One that names no server, on a machine where none answers hark, is
    /// refused: whether it records a microphone or what the system plays cannot be told. Until
    /// 2026-11-29 hark asked only the user's server and took a default it could not ask about for
    /// a microphone: the first recorded the other server's monitor on the microphone's grant.
    @Test func aDefinitionReachingADefaultSourceIsLookedUpOnItsOwnServer() throws {
        let (rig, _) = try rig()
        let socket = rig.runtimeDirectory.appendingPathComponent("pulse/native").path
        try rig.appendConfiguration("pcm.elsewhere { type pulse; server \"unix:\(socket)\" }\npcm.nowhere { type pulse }")
        // hark looks for the user's server in a runtime directory without one.
        let empty = rig.path("empty-run")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        rig.extraEnvironment["XDG_RUNTIME_DIR"] = empty
        let elsewhere = try runHark(["record", "-D", "elsewhere", "-d", "0.5", "-o", rig.path("elsewhere.flac")], rig: rig)
        #expect(elsewhere.status == 77, "\(elsewhere.standardError)")
        #expect(elsewhere.standardError.contains("not been allowed to use the system's audio"), "\(elsewhere.standardError)")
        #expect(!FileManager.default.fileExists(atPath: rig.path("elsewhere.flac")))
        // With that access it records, through the plugin, watched on that server.
        #expect(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        let allowed = try runHark(["record", "-D", "elsewhere", "-d", "1", "-o", rig.path("elsewhere.flac")], rig: rig)
        #expect(allowed.status == 0 && allowed.errorLines.count == 2, "\(allowed.standardError)")
        #expect(try FLACTools.test(rig.path("elsewhere.flac")).status == 0)
        let nowhere = try runHark(["record", "-D", "nowhere", "-d", "0.5", "-o", rig.path("nowhere.flac")], rig: rig)
        expectOneLineFailure(nowhere, exitCode: 69, mentioning: "hark: cannot tell whether 'nowhere' records a microphone or what this computer plays")
        #expect(!FileManager.default.fileExists(atPath: rig.path("nowhere.flac")))
    }

    @Test func aDefaultSourceMadeAMonitorWhileThePromptWaitedIsNotRecorded() throws {
        let (rig, _) = try rig(grantMicrophone: false)
        try #require(try runTool("pactl", ["set-default-source", "yeti"], environment: rig.environment).status == 0)
        let output = rig.path("never.flac")
        let session = try TerminalSession(harkCommand(["record", "-D", "pulse", "-d", "0.5", "-o", output]), rig: rig)
        #expect(session.waitFor(promptQuestion), "\(session.screen)")
        #expect(session.screen.contains("microphone"), "asked for the microphone: \(session.screen)")
        try #require(try runTool("pactl", ["set-default-source", "vmic.monitor"], environment: rig.environment).status == 0)
        session.type("o\n")
        let result = session.finish()
        #expect(result.status == 77, "\(result.screen)")
        #expect(result.screen.contains("hark: 'pulse' now reaches 'vmic.monitor', what this computer plays, and hark was allowed the microphone; nothing was recorded"),
                "\(result.screen)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
