import Foundation
import Testing

/// hark on the stack today's desktops run (`PipeWireDesktop`): PipeWire with WirePlumber, reached
/// through pipewire-pulse as hark's libpulse reaches PulseAudio, and GSettings' dconf backend on a
/// session bus for the desktop's microphone switch. The other sound-server suites use PulseAudio
/// itself; these check that what they promise holds on PipeWire too: sources by description,
/// bit-exact audio and surround layouts, hark's name on the stream, system audio's own permission,
/// a server that goes away, and the switch read and watched as GNOME's Settings writes it.
@Suite(.enabled(if: PipeWireDesktop.isInstalled, "needs dbus-daemon, pipewire, wireplumber and pipewire-pulse (scripts/install-deps)"))
struct PipeWireDesktopTests {
    /// A PipeWire desktop with a null sink `vmic` ("Speakers"), whose monitor is system audio.
    func rig() throws -> ALSATestRig {
        let rig = try ALSATestRig(input: Data())
        try rig.startPipeWireDesktop()
        let loaded = try runTool("pactl", ["load-module", "module-null-sink", "sink_name=vmic",
                                           #"sink_properties='device.description="Speakers"'"#], environment: rig.environment)
        try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
        return rig
    }

    @Test func listsPipeWiresSourcesByDescriptionWithMonitorsApart() throws {
        let rig = try rig()
        let fifo = rig.path("mic.fifo")
        let loaded = try runTool("pactl", ["load-module", "module-pipe-source", "file=\(fifo)", "source_name=studiopipe",
                                           #"source_properties='device.description="Studio Pipe Microphone"'"#],
                                 environment: rig.environment)
        try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
        let result = try runHark(["devices"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let text = String(decoding: result.standardOutput, as: UTF8.self)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Sound server: PulseAudio (on PipeWire ") == true, "\(text)")
        let microphones = try #require(lines.firstIndex { $0.hasPrefix("Microphones") }, "\(text)")
        let monitors = try #require(lines.firstIndex { $0.hasPrefix("System audio") }, "\(text)")
        #expect(lines[(microphones + 1)..<monitors].contains { $0.contains(" studiopipe ") && $0.contains("Studio Pipe Microphone") },
                "\(text)")
        #expect(lines[(monitors + 1)...].contains { $0.contains(" vmic.monitor ") && $0.contains("Monitor of Speakers") }, "\(text)")
    }

    /// Chosen by part of its description, a FIFO-fed microphone records sample for sample through
    /// PipeWire's graph (which works in 32-bit float: S16 goes there and back exactly), and the
    /// server names the stream after hark, as GNOME's indicator shows it.
    @Test func recordsBitExactFromASourceChosenByDescriptionUnderHarksName() throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 20 * 48_000)
        let (rig, feeder) = try PipeMicrophone.start(signal, channelMap: "front-left,front-right", onPipeWire: true)
        defer { feeder.stop() }
        let output = rig.path("pipe.flac")
        let recording = try startHark(["record", "-D", "studio pipe", "-d", "3", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 0.2)
        let listing = try runTool("pactl", ["list", "source-outputs"], environment: rig.environment)
        let result = withExtendedLifetime(feeder) { recording.wait(timeout: TestLoad.seconds(60)) }
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("recording from 'Studio Pipe Microphone (pulse:DEVICE=studiopipe)'"), "\(result.standardError)")
        let properties = String(decoding: listing.standardOutput, as: UTF8.self)
        for expected in ["application.name = \"hark\"", "application.id = \"dev.hark.cli\"",
                         "application.icon_name = \"audio-input-microphone\"", "media.role = \"production\""] {
            #expect(properties.contains(expected), "\(expected) in \(properties)")
        }
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        try #require(decoded.count == 2 * 3 * 48_000)
        let input = Array(signal.samples)
        let offset = try PipeMicrophone.offset(of: decoded, in: input, channels: 2)
        PipeMicrophone.expectInputWithInsertedSilence(decoded, input: input, from: offset, channels: 2)
    }

    /// Where ALSA's `default` is PipeWire's own plugin (pipewire-alsa without alsa-plugins' pulse
    /// hook, as on Fedora and Arch), a recording with no -D still goes through pipewire-pulse, to
    /// the same default source: hark's stream, not the plugin's. (The plugin itself is not
    /// installed here: hark reads the configuration only, and never opens it while pipewire-pulse
    /// answers. Before, hark opened it, and here failed with exit 69.)
    @Test func aDefaultThatIsPipeWiresALSAPluginIsRecordedThroughTheServersOwnStream() throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 20 * 48_000)
        let (rig, feeder) = try PipeMicrophone.start(signal, channelMap: "front-left,front-right", onPipeWire: true,
                                                     alsaConfiguration: "pcm.!default { type pipewire }")
        defer { feeder.stop() }
        try rig.dropPulseDefaultHook()
        try #require(try runTool("pactl", ["set-default-source", "studiopipe"], environment: rig.environment).status == 0)
        let output = rig.path("default.flac")
        let result = try withExtendedLifetime(feeder) { try runHark(["record", "-v", "-d", "2", "-o", output], rig: rig) }
        #expect(result.status == 0, "\(result.standardError)")
        // Named after the source it reached, in the notice, the tags and the access log.
        #expect(result.standardError.contains("hark: device 'Studio Pipe Microphone (default)' (the sound server's own stream)"),
                "\(result.standardError)")
        #expect(try FLACTools.tags(output).contains("HARK_SOURCE=Studio Pipe Microphone"))
        #expect(try String(contentsOfFile: rig.accessLogFile, encoding: .utf8).contains("\"device\":\"Studio Pipe Microphone (default)\""))
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        try #require(decoded.count == 2 * 2 * 48_000)
        // pipewire-pulse refuses `@DEFAULT_SOURCE@` for a stream that may not be moved: hark makes
        // its stream for the source by the name the server answered with.
        let special = rig.path("special.flac")
        let named = try withExtendedLifetime(feeder) {
            try runHark(["record", "-D", "pulse:@DEFAULT_SOURCE@", "-d", "1", "-o", special], rig: rig)
        }
        #expect(named.status == 0 && named.standardError.contains("recording from 'Studio Pipe Microphone (pulse:@DEFAULT_SOURCE@)'"),
                "\(named.standardError)")
        #expect(try FLACTools.totalSamples(special) == 48_000)
        let input = Array(signal.samples)
        let offset = try PipeMicrophone.offset(of: decoded, in: input, channels: 2)
        PipeMicrophone.expectInputWithInsertedSilence(decoded, input: input, from: offset, channels: 2)
    }

    /// 7.1 in the source's own channel map: hark takes the layout from the server, FLAC holds each
    /// channel bit-exact where it was, and Opus gets its surround mapping with no --channel-map.
    /// At 48 kHz, the rate PipeWire's graph runs at: a 16 kHz source and stream were resampled to
    /// it and back, which is not bit-exact (the resampler's first frames differ).
    @Test func surroundComesWithTheSourcesLayout() throws {
        try SoundServerStreamTests.recordSurround(sampleRate: 48_000, onPipeWire: true)
    }

    /// Asked for 5.1 from a stereo source, PipeWire holds about 280 ms more a second or so into
    /// many recordings. hark's timeline took that for lost audio ("1 overruns (280 ms lost)", and
    /// `--pad-overruns` put silence into whole audio); the server's own latency report shows it
    /// for what it is.
    @Test func latencyPipeWireAddsIsNotTakenForLostAudio() throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 20 * 48_000)
        let (rig, feeder) = try PipeMicrophone.start(signal, channelMap: "front-left,front-right", onPipeWire: true)
        defer { feeder.stop() }
        let output = rig.path("upmixed.wav")
        let result = try withExtendedLifetime(feeder) {
            try runHark(["record", "-D", "studio pipe", "-c", "6", "-d", "5", "--pad-overruns", "-o", output], rig: rig)
        }
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("; 0 overruns (0 ms lost), 0 frames dropped;"), "\(result.standardError)")
        let sox = try runTool("sox", ["--i", "-s", output])
        #expect(String(decoding: sox.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "240000")
    }

    @Test func aMonitorNeedsTheSystemAudioGrant() throws {
        let rig = try rig()
        let output = rig.path("monitor.flac")
        let refused = try runHark(["record", "-D", "Monitor of Speakers", "-d", "0.5", "-o", output], rig: rig)
        #expect(refused.status == 77, "\(refused.standardError)")
        #expect(refused.errorLines == ["hark: hark has not been allowed to use the system's audio (what this computer plays) and there is no terminal to ask on; allow it with 'hark permissions grant systemAudio'"])
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        let recorded = try runHark(["record", "-D", "vmic.monitor", "-d", "0.5", "-o", output], rig: rig)
        #expect(recorded.status == 0, "\(recorded.standardError)")
        #expect(try FLACTools.totalSamples(output) == 24_000)
    }

    /// The stream stays on its source (`SourceStaysPutTests` on PulseAudio): it cannot be moved to
    /// the monitor, and when the source goes away WirePlumber does not link it to another one; the
    /// recording ends as from an unplugged device.
    @Test func theStreamStaysOnItsSourceAndEndsWithIt() throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 40 * 48_000)
        let (rig, feeder) = try PipeMicrophone.start(signal, channelMap: "front-left,front-right", onPipeWire: true)
        defer { feeder.stop() }
        let loaded = try runTool("pactl", ["load-module", "module-null-sink", "sink_name=vmic"], environment: rig.environment)
        try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
        let output = rig.path("unplugged.flac")
        let recording = try startHark(["record", "-D", "studiopipe", "-d", "30", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        let stream = try SourceStaysPutTests.harksStream(rig)
        let moved = try runTool("pactl", ["move-source-output", stream.index, "vmic.monitor"], environment: rig.environment)
        #expect(moved.status != 0, "moved onto the monitor")
        #expect(try SourceStaysPutTests.harksStream(rig).source == (try SourceStaysPutTests.sourceIndex("studiopipe", rig)))
        let modules = try runTool("pactl", ["list", "short", "modules"], environment: rig.environment)
        let pipeModule = try #require(String(decoding: modules.standardOutput, as: UTF8.self).split(separator: "\n")
            .first { $0.contains("module-pipe-source") }?.split(separator: "\t").first.map(String.init))
        try #require(try runTool("pactl", ["unload-module", pipeModule], environment: rig.environment).status == 0)
        let result = withExtendedLifetime(feeder) { recording.wait(timeout: TestLoad.seconds(30)) }
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.errorLines.last?.hasPrefix("hark: capture device lost") == true, "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
    }

    /// pipewire-pulse going away (a crash, a desktop session ending) ends the recording as an
    /// unplugged device does: one line, exit 74, a finished file with what came before.
    @Test func aServerThatGoesAwayEndsTheRecordingWithAFinishedFile() throws {
        try SoundServerStreamTests.killTheServerWhileRecording(onPipeWire: true)
    }
}

/// The desktop's microphone switch as GNOME's Settings writes it: through dconf, GSettings' desktop
/// backend, whose service the session bus starts and whose changes reach hark's helper as bus
/// signals (DesktopPrivacySwitchTests use GLib's keyfile backend, which needs no bus).
@Suite(.enabled(if: PipeWireDesktop.isInstalled && DesktopPrivacySwitchTests.schemaInstalled
                && FileManager.default.fileExists(atPath: "/usr/share/dbus-1/services/ca.desrt.dconf.service"),
                "needs the PipeWire desktop stack, gsettings-desktop-schemas and dconf (scripts/install-deps)"))
struct DconfPrivacySwitchTests {
    func setSwitch(microphoneDisabled: Bool, _ rig: ALSATestRig) throws {
        let set = try runTool("gsettings", ["set", "org.gnome.desktop.privacy", "disable-microphone", "\(microphoneDisabled)"],
                              environment: rig.environment)
        try #require(set.status == 0, "gsettings set: \(set.standardError)")
    }

    @Test func switchedOffBeforeARecordingIsRestrictedAndDuringOneStopsItWithinASecond() throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 40 * 48_000)
        let (rig, feeder) = try PipeMicrophone.start(signal, channelMap: "front-left,front-right", onPipeWire: true)
        defer { feeder.stop() }
        rig.extraEnvironment["GSETTINGS_BACKEND"] = "dconf"
        try setSwitch(microphoneDisabled: true, rig)
        let database = rig.path("config/dconf/user")
        try #require(FileManager.default.fileExists(atPath: database), "gsettings did not write through dconf")
        let never = try runHark(["record", "-D", "studiopipe", "-d", "1", "-o", rig.path("never.flac")], rig: rig)
        #expect(never.status == 77, "\(never.standardError)")
        #expect(never.standardError.contains("Microphone access is turned off in the desktop's privacy settings"), "\(never.standardError)")
        #expect(!FileManager.default.fileExists(atPath: rig.path("never.flac")))

        try setSwitch(microphoneDisabled: false, rig)
        let output = rig.path("switched.flac")
        let recording = try startHark(["record", "-D", "studiopipe", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        try setSwitch(microphoneDisabled: true, rig)
        let result = withExtendedLifetime(feeder) { recording.wait(timeout: TestLoad.seconds(20)) }
        #expect(result.status == 77, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: microphone access was turned off in the desktop's privacy settings; the recording was stopped and finalized")
        // As `revocationStopDelay` times it: dconf's database replaced (the service writes a new
        // file and renames it into place, then signals the change on the bus) to the last sample
        // recorded.
        let reaction = try lastSampleTime(flac: output) - changeTime(of: database)
        print("DconfPrivacySwitchTests: the last sample recorded \(reaction) s after the switch")
        #expect(reaction < 1, "the capture went on \(reaction) s after the switch")
        #expect(try FLACTools.test(output).status == 0)
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        let input = Array(signal.samples)
        let offset = try PipeMicrophone.offset(of: decoded, in: input, channels: 2)
        PipeMicrophone.expectInputWithInsertedSilence(decoded, input: input, from: offset, channels: 2)
    }
}
