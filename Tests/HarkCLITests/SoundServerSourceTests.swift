import Foundation
import Testing

/// Microphones by the names a desktop shows: a private PulseAudio per test with extra sources
/// (`module-null-source` with a description), listed, chosen by name or part of the description,
/// and recorded from through the server's own stream; what the server sees of hark read back with pactl.
@Suite struct SoundServerSourceTests {
    /// A rig whose PulseAudio has, besides its `vmic` sink (monitor `vmic.monitor`, the default
    /// source), the given sources: (name, description, rate, channels).
    func rig(sources: [(String, String, Int, Int)]) throws -> ALSATestRig {
        let rig = try ALSATestRig(input: Data())
        try rig.startPulseAudio()
        for (name, description, rate, channels) in sources {
            let loaded = try runTool("pactl", ["load-module", "module-null-source", "source_name=\(name)",
                                               "description='\(description)'", "rate=\(rate)", "channels=\(channels)"],
                                     environment: rig.environment)
            try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
        }
        return rig
    }

    static let twoMicrophones = [("yeti", "Blue Yeti Studio", 48_000, 2), ("usbmic", "USB Headset Microphone", 44_100, 1)]

    @Test func listsTheServersSourcesByDescriptionMonitorsApartDefaultMarked() throws {
        let rig = try rig(sources: Self.twoMicrophones)
        let result = try runHark(["devices"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let text = String(decoding: result.standardOutput, as: UTF8.self)
        let lines = text.split(separator: "\n").map(String.init)
        let microphones = try #require(lines.firstIndex { $0.hasPrefix("Microphones") }, "\(text)")
        let monitors = try #require(lines.firstIndex { $0.hasPrefix("System audio") }, "\(text)")
        let alsa = try #require(lines.firstIndex { $0 == "ALSA devices:" }, "\(text)")
        #expect(lines[0].hasPrefix("Sound server: pulseaudio"), "\(text)")
        #expect(microphones < monitors && monitors < alsa)
        let microphoneLines = lines[(microphones + 1)..<monitors]
        #expect(microphoneLines.contains { $0.contains(" yeti ") && $0.contains("Blue Yeti Studio (48000 Hz, 2 ch)") }, "\(text)")
        #expect(microphoneLines.contains { $0.contains(" usbmic ") && $0.contains("USB Headset Microphone (44100 Hz, 1 ch)") }, "\(text)")
        // The rig's default source is the sink's monitor: listed with the monitors, marked default.
        let monitorLines = lines[(monitors + 1)..<alsa]
        #expect(monitorLines.contains { $0.hasPrefix("  * vmic.monitor ") }, "\(text)")
        #expect(!microphoneLines.contains { $0.contains("monitor") }, "\(text)")

        let json = try runHark(["devices", "--json"], rig: rig)
        #expect(json.status == 0, "\(json.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
        let server = try #require(object["soundServer"] as? [String: Any])
        let sources = try #require(server["sources"] as? [[String: Any]])
        let yeti = try #require(sources.first { $0["name"] as? String == "yeti" })
        #expect(yeti["description"] as? String == "Blue Yeti Studio")
        #expect(yeti["rate"] as? Int == 48_000 && yeti["channels"] as? Int == 2)
        #expect(yeti["monitor"] as? Bool == false && yeti["default"] as? Bool == false)
        #expect(yeti["alsaDevice"] as? String == "pulse:DEVICE=yeti")
        let monitor = try #require(sources.first { $0["name"] as? String == "vmic.monitor" })
        #expect(monitor["monitor"] as? Bool == true && monitor["default"] as? Bool == true)
        #expect((object["alsa"] as? [[String: Any]])?.contains { $0["name"] as? String == "filecap" } == true)
    }

    @Test func withNoSoundServerRunningALSADevicesAreStillListed() throws {
        let rig = try ALSATestRig(input: Data())
        let result = try runHark(["devices"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let text = String(decoding: result.standardOutput, as: UTF8.self)
        #expect(text.hasPrefix("Sound server: none reachable (no sound server is running"), "\(text)")
        #expect(text.contains("\n  filecap\n"), "\(text)")
        let json = try runHark(["devices", "--json"], rig: rig)
        let object = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
        #expect(object["soundServer"] is NSNull)
        #expect((object["soundServerError"] as? String)?.contains("no sound server") == true)
    }

    @Test(arguments: ["yeti studio", "yeti", "BLUE YETI"])
    func recordsFromASourceChosenByNameOrPartOfItsDescription(query: String) throws {
        let rig = try rig(sources: Self.twoMicrophones)
        let output = rig.path("yeti.flac")
        let result = try runHark(["record", "-D", query, "-d", "1", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("recording from 'Blue Yeti Studio (pulse:DEVICE=yeti)'"), "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
        #expect(try FLACTools.totalSamples(output) == 48_000)
        let tags = try FLACTools.tags(output)
        #expect(tags.contains("HARK_SOURCE=Blue Yeti Studio"), "\(tags)")
        #expect(tags.contains { $0.hasPrefix("HARK_CAPTURE=") && $0.hasSuffix(" device=pulse:DEVICE=yeti") }, "\(tags)")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        #expect(log.contains("\"device\":\"Blue Yeti Studio (pulse:DEVICE=yeti)\""), "\(log)")
    }

    /// A "microphone" fed from a FIFO at real-time pace (module-pipe-source), chosen by part of its
    /// description: what hark wrote decodes to exactly what went in.
    @Test func recordsBitExactFromAPipeSourceChosenByDescription() throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 20 * 48_000)
        let (rig, feeder) = try PipeMicrophone.start(signal, channelMap: "front-left,front-right")
        defer { feeder.stop() }
        let output = rig.path("pipe.flac")
        let result = try runHark(["record", "-D", "studio pipe", "-d", "2", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("recording from 'Studio Pipe Microphone (pulse:DEVICE=studiopipe)'"))
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        try #require(decoded.count == 2 * 48_000 * 2)
        let input = Array(signal.samples)
        let offset = try PipeMicrophone.offset(of: decoded, in: input, channels: 2)
        #expect(offset % 2 == 0)
        expectSameElements(Array(input[offset..<(offset + decoded.count)]), decoded, "decoded differs from the input at \(offset / 2) frames in")
    }

    @Test func aNameThatFitsSeveralSourcesOrNoneIsOneLineAndOpensNothing() throws {
        let rig = try rig(sources: Self.twoMicrophones + [("yeti2", "Blue Yeti Backup", 48_000, 2)])
        let output = rig.path("never.flac")
        let ambiguous = try runHark(["record", "-D", "blue yeti", "-d", "1", "-o", output], rig: rig)
        #expect(ambiguous.status == 64, "\(ambiguous.standardError)")
        #expect(ambiguous.errorLines == ["hark: 'blue yeti' fits 2 sources: 'yeti' (Blue Yeti Studio), 'yeti2' (Blue Yeti Backup); give more of the description, or the name"])
        let unknown = try runHark(["record", "-D", "Rode NT-USB", "-d", "1", "-o", output], rig: rig)
        #expect(unknown.status == 69, "\(unknown.standardError)")
        #expect(unknown.errorLines.count == 1 && unknown.standardError.contains("no capture device or sound-server source named 'Rode NT-USB'"),
                "\(unknown.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(!FileManager.default.fileExists(atPath: rig.accessLogFile), "nothing was recorded")
        // With no sound server to ask, an unknown name says so.
        rig.pulse?.stop()
        let noServer = try runHark(["record", "-D", "Blue Yeti", "-d", "1", "-o", output], rig: rig)
        #expect(noServer.status == 69 && noServer.standardError.contains("not an ALSA device, and no sound server is running"),
                "\(noServer.standardError)")
        // A PULSE_SERVER that leads nowhere is named: another server may well be running.
        let nowhere = "unix:" + rig.path("no-server-here")
        rig.extraEnvironment["PULSE_SERVER"] = nowhere
        let misdirected = try runHark(["record", "-D", "Blue Yeti", "-d", "1", "-o", output], rig: rig)
        #expect(misdirected.status == 69 && misdirected.errorLines.count == 1
                    && misdirected.standardError.contains("cannot reach the sound server PULSE_SERVER names, '\(nowhere)'"),
                "\(misdirected.standardError)")
    }

    /// Looking `-D` up and recording from it share one connection to the server (a second one cost
    /// about half a millisecond of CPU at every start). The server gives each client it accepts the
    /// next index, so two `pactl` clients, one before the recording and one after, say how many
    /// connections hark made between them.
    @Test(arguments: ["yeti", "pulse:DEVICE=yeti", "pulse"])
    func aRecordingConnectsToTheServerOnce(device: String) throws {
        let rig = try rig(sources: Self.twoMicrophones)
        try #require(try runTool("pactl", ["set-default-source", "yeti"], environment: rig.environment).status == 0)
        func newestClientIndex() throws -> Int {
            let listing = try runTool("pactl", ["list", "short", "clients"], environment: rig.environment)
            let lines = String(decoding: listing.standardOutput, as: UTF8.self).split(separator: "\n")
            // pactl lists itself: index, module, binary.
            let indexes = lines.compactMap { line -> Int? in
                let fields = line.split(separator: "\t")
                return fields.count >= 3 && fields[2] == "pactl" ? Int(fields[0]) : nil
            }
            return try #require(indexes.max(), "pactl list short clients: \(lines)")
        }
        let before = try newestClientIndex()
        let result = try runHark(["record", "-D", device, "-d", "0.5", "-o", rig.path("once.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let after = try newestClientIndex()
        #expect(after - before - 1 == 1, "\(device): hark connected to the server \(after - before - 1) times")
        #expect(try FLACTools.totalSamples(rig.path("once.flac")) == 24_000)
    }

    /// The connection made while looking `-D` up waits through the consent prompt; a server that
    /// went away meanwhile (restarted, say) is connected to anew, and the recording goes ahead.
    @Test func aServerRestartedWhileThePromptWaitsIsConnectedToAnew() throws {
        let rig = try ALSATestRig(input: Data(), grantMicrophone: false)
        func startServer() throws {
            try rig.startPulseAudio()
            let loaded = try runTool("pactl", ["load-module", "module-null-source", "source_name=yeti", "description='Blue Yeti Studio'"],
                                     environment: rig.environment)
            try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
        }
        try startServer()
        let output = rig.path("restarted.flac")
        let session = try TerminalSession(harkCommand(["record", "-D", "yeti", "-d", "0.5", "-o", output]), rig: rig)
        #expect(session.waitFor(promptQuestion), "\(session.screen)")
        rig.pulse?.stop()
        try startServer()
        session.type("o\n")
        let result = session.finish()
        #expect(result.status == 0, "\(result.screen)")
        #expect(try FLACTools.totalSamples(output) == 24_000)
    }

    /// What the desktop's microphone indicator and pavucontrol show is the server's view of the
    /// stream: hark's name and icon, not "ALSA plug-in [hark]".
    @Test func theServerSeesHarksNameIconAndRole() throws {
        let rig = try rig(sources: Self.twoMicrophones)
        let output = rig.path("named.flac")
        let recording = try startHark(["record", "-D", "yeti", "-o", output], rig: rig)
        // Audio in the file means the stream is connected (the header is written before the device
        // opens); it runs until the listings are taken, however slowly a loaded machine takes them.
        try OutputGrowth.waitForFLACAudio(output, seconds: 0.2)
        let listing = try runTool("pactl", ["list", "source-outputs"], environment: rig.environment)
        let clients = try runTool("pactl", ["list", "clients"], environment: rig.environment)
        recording.send(SIGINT)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 0, "\(result.standardError)")
        let properties = String(decoding: listing.standardOutput, as: UTF8.self)
        for expected in ["application.name = \"hark\"", "application.id = \"dev.hark.cli\"",
                         "application.icon_name = \"audio-input-microphone\"", "media.role = \"production\""] {
            #expect(properties.contains(expected), "\(expected) in \(properties)")
        }
        #expect(!properties.contains("ALSA plug-in"), "\(properties)")
        #expect(!String(decoding: clients.standardOutput, as: UTF8.self).contains("ALSA plug-in [hark]"))
    }
}
