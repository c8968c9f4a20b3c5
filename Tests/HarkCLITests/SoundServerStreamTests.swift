import AudioFormat
import Foundation
import Testing

/// Recording through the sound server's own record stream (libpulse), not ALSA's pulse plugin
/// (#16): a source's name, `pulse`, `pulse:SOURCE` and a desktop's `default` take this route. The
/// input is a "microphone" fed from a FIFO at real-time pace (module-pipe-source), so what hark
/// wrote can be compared with what went in, sample for sample.
@Suite struct SoundServerStreamTests {
    /// A stereo pipe microphone playing `inputSeconds` of the test signal, and hark recording it
    /// with `arguments` (after `record`) into `name`, running once its first FLAC audio is
    /// written (within `seconds`). Keep the rig and the feeder alive while hark records.
    static func startRecording(inputSeconds: Int, _ arguments: [String], into name: String, audioWithin seconds: Double,
                               onPipeWire: Bool = false)
        throws -> (rig: ALSATestRig, feeder: PipeSourceFeeder, recording: RunningProcess, output: String) {
        let signal = TestSignal(format: AccessLogTests.format, frames: inputSeconds * 48_000)
        let (rig, feeder) = try PipeMicrophone.start(signal, channelMap: "front-left,front-right", onPipeWire: onPipeWire)
        let output = rig.path(name)
        let recording = try startHark(["record"] + arguments + ["-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: seconds)
        return (rig, feeder, recording, output)
    }

    /// One thread reads the stream and sleeps a period at a time: no libpulse thread
    /// (`threaded-ml`, the plugin's) and at most one wake-up of the capture thread a period.
    @Test func theCaptureThreadWakesOnceAPeriodAndLibpulseRunsNoThreadOfItsOwn() throws {
        let (rig, feeder, recording, output) = try Self.startRecording(inputSeconds: 30, ["-D", "studiopipe", "-d", "15"],
                                                                       into: "sleepy.flac", audioWithin: 1)
        defer { feeder.stop() }
        let (runs, sleeps, cpuSeconds, seconds) = WakeUpTests.activity(of: recording.pid, over: 4_000_000)
        recording.send(SIGINT)
        let result = withExtendedLifetime(rig) { recording.wait(timeout: TestLoad.seconds(30)) }
        #expect(result.status == 0, "\(result.standardError)")
        let capture = try #require(runs["hark-capture"], "the capture thread is named: \(runs)")
        let wakeUps = try #require(sleeps["hark-capture"])
        print("SoundServerStreamTests: over \(String(format: "%.2f", seconds)) s the capture thread slept and woke \(wakeUps) times "
              + "(8 periods a second), ran in \(capture) timeslices, \(String(format: "%.4f", cpuSeconds["hark-capture"] ?? 0)) s on the CPU")
        #expect(runs["threaded-ml"] == nil, "libpulse's threaded main loop runs in hark: \(runs)")
        // 125 ms periods. A wake-up is a voluntary sleep (a preemption on a loaded machine is not);
        // one more for the measurement's edges.
        #expect(wakeUps <= Int((seconds * 8).rounded(.up)) + 1, "capture thread: \(wakeUps) wake-ups in \(seconds) s")
        // And it does sleep: a thread that polled would seldom sleep and would stay on the CPU
        // (measured: 32 sleeps and 5 ms of CPU in 4 s; a poller takes a third of a core or more).
        #expect(wakeUps >= Int(seconds * 4), "capture thread: \(wakeUps) sleeps in \(seconds) s; is it polling?")
        let captureCPU = cpuSeconds["hark-capture"] ?? 0
        #expect(captureCPU <= 0.05 * seconds * TestLoad.slowdown, "capture thread: \(captureCPU) s on the CPU in \(seconds) s")
        #expect(try FLACTools.test(output).status == 0)
    }

    /// A period longer than half the server's queue (4 MiB) is cut to half of it: the queue holds
    /// the next period while one is read, and with a 2 s period at 96 kHz × 8 × 32-bit (6 MB) it
    /// overflowed every period. HARK_CAPTURE gives the period used (65,536 frames of 32 bytes);
    /// the recording has all its time.
    @Test func aPeriodLongerThanHalfTheServersQueueIsCutToIt() throws {
        let rig = try ALSATestRig(input: Data())
        try rig.startPulseAudio()
        let loaded = try runTool("pactl", ["load-module", "module-null-source", "source_name=bigmic", "rate=96000", "channels=8"],
                                 environment: rig.environment)
        try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
        let output = rig.path("long-period.flac")
        let result = try runHark(["record", "-D", "bigmic", "-c", "8", "-r", "96000", "-f", "S32_LE", "-F", "2000000", "-B", "4000000",
                                  "-d", "2", "-o", output], rig: rig, timeout: TestLoad.seconds(60))
        #expect(result.status == 0, "\(result.standardError)")
        let capture = try FLACTools.tags(output).first { $0.hasPrefix("HARK_CAPTURE=") }
        #expect(capture?.contains(" period_frames=65536 ") == true, "\(String(describing: capture))")
        #expect(try FLACTools.totalSamples(output) == 192_000)
        #expect(result.standardError.contains("0 overruns (0 ms lost), 0 frames dropped"), "\(result.standardError)")
    }

    /// The stream is named by the app's purpose string, as the desktop's microphone indicator and
    /// mixer show it, and the server sees hark's own name, not the ALSA plugin's.
    @Test func theStreamCarriesThePurposeString() throws {
        let (rig, feeder, recording, _) = try Self.startRecording(inputSeconds: 20, ["-D", "Studio Pipe"],
                                                                  into: "named.flac", audioWithin: 0.2)
        defer { feeder.stop() }
        // The recording runs until the listing is taken, however slowly a loaded machine takes it.
        let listing = try runTool("pactl", ["list", "source-outputs"], environment: rig.environment)
        recording.send(SIGINT)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 0, "\(result.standardError)")
        let properties = String(decoding: listing.standardOutput, as: UTF8.self)
        // HarkManifest's microphone purpose string.
        let purpose = "hark records audio from the capture device you choose into the file or pipe you name, only while it shows that it is recording."
        #expect(properties.contains("media.name = \"\(purpose)\""), "\(properties)")
        #expect(properties.contains("application.name = \"hark\"") && !properties.contains("ALSA Capture"), "\(properties)")
    }

    /// `--channel-map` is what the server delivers: asked for the front right speaker alone from a
    /// stereo microphone, it hands over that channel, sample for sample (and the left one for FL).
    @Test(arguments: [("FR", 1), ("FL", 0)])
    func theServerDeliversTheSpeakerHarkAsksFor(speaker: String, inputChannel: Int) throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 20 * 48_000)
        let (rig, feeder) = try PipeMicrophone.start(signal, channelMap: "front-left,front-right")
        defer { feeder.stop() }
        let output = rig.path("one.flac")
        let result = try withExtendedLifetime(feeder) {
            try runHark(["record", "-D", "studiopipe", "-c", "1", "--channel-map", speaker, "-d", "2", "-o", output], rig: rig)
        }
        #expect(result.status == 0, "\(result.standardError)")
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        try #require(decoded.count == 2 * 48_000)
        let wanted = stride(from: inputChannel, to: signal.samples.count, by: 2).map { signal.samples[$0] }
        let offset = try PipeMicrophone.offset(of: decoded, in: wanted, channels: 1)
        expectSameElements(Array(wanted[offset..<(offset + decoded.count)]), decoded, "the input's \(speaker) channel")
    }

    /// Eight channels come in the server's own layout (7.1 in WAVE's order, what hark asks for):
    /// FLAC gets them bit-exact, and Opus needs no --channel-map for its surround mapping. (Eight,
    /// not six: module-pipe-source reads its FIFO in 4 KiB pieces, which must be whole frames.)
    @Test func surroundComesWithItsLayout() throws {
        // 16 kHz: a third of 48 kHz's bytes for the feeder to keep up with on a loaded machine.
        try Self.recordSurround(sampleRate: 16_000, onPipeWire: false)
    }

    /// Records 2 s of 7.1 at `sampleRate` from a pipe microphone with that layout, on PulseAudio or
    /// PipeWire, to FLAC and Opus at once, and checks both.
    static func recordSurround(sampleRate: Int, onPipeWire: Bool) throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 8, sampleRate: sampleRate)
        let signal = TestSignal(format: format, frames: 20 * sampleRate)
        let (rig, feeder) = try PipeMicrophone.start(
            signal, channelMap: "front-left,front-right,front-center,lfe,rear-left,rear-right,side-left,side-right", onPipeWire: onPipeWire)
        defer { feeder.stop() }
        let flac = rig.path("eight.flac")
        let opus = rig.path("eight.opus")
        let result = try withExtendedLifetime(feeder) {
            try runHark(["record", "-v", "-D", "studiopipe", "-c", "8", "-r", "\(sampleRate)", "-d", "2", "-o", flac, "-o", opus], rig: rig)
        }
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("; speakers FL,FR,FC,LFE,RL,RR,SL,SR (the sound server's channel map)"), "\(result.standardError)")
        let decoded = try FLACTools.decode(flac, bitsPerSample: 16)
        try #require(decoded.count == 8 * 2 * sampleRate)
        let input = Array(signal.samples)
        let offset = try PipeMicrophone.offset(of: decoded, in: input, channels: 8)
        if onPipeWire {
            PipeMicrophone.expectInputWithInsertedSilence(decoded, input: input, from: offset, channels: 8)
        } else {
            // PulseAudio's pipe source takes the writer's pace: nothing may differ.
            expectSameElements(Array(input[offset..<(offset + decoded.count)]), decoded, "\(result.standardError)")
        }
        let info = try OpusTools.info(opus)
        #expect(info.isClean && info.text.contains("Channel Mapping Family: 1"), "\(info.text)")
        #expect(try OpusTools.decode(opus).channels == 8)
    }

    /// The server going away mid-recording ends it like an unplugged device: one line, exit 74,
    /// and a finished file holding what came before.
    @Test func aServerThatGoesAwayEndsTheRecordingWithAFinishedFile() throws {
        try Self.killTheServerWhileRecording(onPipeWire: false)
    }

    /// A source the server suspends mid-recording (here the rig's sink, and with it its monitor)
    /// sends nothing more: after 5 s the recording ends as from a device that stopped, and the
    /// line says why, from libpulse's own record of the suspension (it said only that the device
    /// stopped delivering audio). The file holds what came before, finished.
    @Test func aSourceSuspendedMidRecordingEndsItSayingSo() throws {
        let rig = try ALSATestRig(input: Data())
        try rig.startPulseAudio()
        try #require(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        let output = rig.path("suspended.flac")
        let recording = try startHark(["record", "-D", "vmic.monitor", "-d", "60", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        let suspended = try runTool("pactl", ["suspend-sink", "vmic", "1"], environment: rig.environment)
        try #require(suspended.status == 0, "\(suspended.standardError)")
        let result = recording.wait(timeout: TestLoad.seconds(40))
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: capture device lost: the device was suspended and did not resume",
                "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
        let frames = try #require(try FLACTools.totalSamples(output))
        #expect(frames >= 48_000 && frames < 50 * 48_000, "\(frames) frames")
    }

    /// Suspended for a second and a half and resumed, the source's recording goes on: the time it
    /// was away is audio lost, found in the stream's timeline, and with `--pad-overruns` silence
    /// in its place, so the file is exactly `-d` long.
    @Test func aSourceSuspendedBrieflyIsPaddedAndTheRecordingGoesOn() throws {
        let rig = try ALSATestRig(input: Data())
        try rig.startPulseAudio()
        try #require(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        let output = rig.path("resumed.flac")
        let recording = try startHark(["record", "-D", "vmic.monitor", "-d", "8", "--pad-overruns", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        // The source was away at most from before the suspension was asked for until the resume
        // was answered, and at least the 1.5 s between them.
        let suspending = Date()
        for state in ["1", "0"] {
            let step = try runTool("pactl", ["suspend-sink", "vmic", state], environment: rig.environment)
            try #require(step.status == 0, "\(step.standardError)")
            if state == "1" { usleep(1_500_000) }
        }
        let away = Date().timeIntervalSince(suspending)
        let result = recording.wait(timeout: TestLoad.seconds(40))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try FLACTools.totalSamples(output) == 8 * 48_000, "\(result.standardError)")
        let lost = try #require(result.standardError.firstMatch(of: /(\d+) overruns? \((\d+) ms lost, (\d+) ms padded with silence/),
                                "\(result.standardError)")
        print("SoundServerStreamTests: a source away for 1.5–\(String(format: "%.3f", away)) s: \(lost.0)")
        // The time away, and up to two periods more: measured here 0.09–0.11 s beyond the window
        // (what the sink had rendered for its monitor and not yet sent when it suspended is not
        // sent after it), which the timeline counts with the rest.
        let lostSeconds = Double(lost.2)! / 1000
        #expect(lostSeconds >= 1.4 && lostSeconds <= away + 0.25 * TestLoad.slowdown, "\(lost.0), away 1.5–\(away) s")
    }

    /// Kills PulseAudio, or pipewire-pulse, a second into a 30 s recording from a pipe microphone.
    static func killTheServerWhileRecording(onPipeWire: Bool) throws {
        let (rig, feeder, recording, output) = try Self.startRecording(inputSeconds: 40, ["-D", "studiopipe", "-d", "30"],
                                                                       into: "cut.flac", audioWithin: 1, onPipeWire: onPipeWire)
        defer { feeder.stop() }
        // The feeder first, so that the source cannot outlast it.
        feeder.stop()
        if onPipeWire { rig.pipeWire?.stopDaemon("pipewire-pulse") } else { rig.pulse?.stop() }
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.standardError.contains("capture device lost: the sound server went away"), "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
        let frames = try #require(try FLACTools.totalSamples(output))
        #expect(frames >= 48_000 && frames < 30 * 48_000, "\(frames) frames")
    }

    /// The first sample's time comes from the stream's latency (one timing request to the server):
    /// after hark started, and the recording's length before it ended; and the device clock's drift
    /// is measured (it needs two whole 5 s buckets 5 s apart: 15 s). A null sink keeps the system's
    /// time, so the figure is the measurement's own error: read on a cadence, not as packets
    /// arrive, the stream gives a few milliseconds over the span (docs/known-limits.md). 24 s put
    /// the first and the last whole bucket 10–20 s apart, not 5–15, halving the worst error a
    /// loaded machine adds.
    @Test func theFirstSampleIsTimedFromTheServersLatency() throws {
        let rig = try ALSATestRig(input: Data())
        try rig.startPulseAudio()
        // `pulse` records the rig's default source, its sink's monitor: system audio.
        #expect(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        let output = rig.path("timed.flac")
        let launched = Date()
        let result = try runHark(["record", "-v", "-D", "pulse", "-d", "24", "-o", output], rig: rig)
        let ended = Date()
        #expect(result.status == 0, "\(result.standardError)")
        // Named after the source `pulse` reached: the rig's default, its sink's monitor.
        #expect(result.standardError.contains("device 'Monitor of ") && result.standardError.contains(" (pulse)' (the sound server's own stream)"),
                "\(result.standardError)")
        let line = try #require(result.errorLines.first { $0.contains("first sample captured at ") }, "\(result.standardError)")
        let stamp = try #require(line.firstMatch(of: /at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)/)?.1).description
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let first = try #require(formatter.date(from: stamp), "\(stamp)")
        print("SoundServerStreamTests: first sample \(String(format: "%.3f", first.timeIntervalSince(launched))) s after launch; \(line)")
        #expect(first >= launched.addingTimeInterval(-0.05) && first <= ended.addingTimeInterval(-23.9), "\(stamp), launched \(launched), ended \(ended)")
        let summary = try #require(result.errorLines.first { $0.contains("recorded 24.000 s") }, "\(result.standardError)")
        // hark drops a drift beyond 1000 ppm as a failed measurement (`CaptureClock`), so a figure
        // printed is within it; that one is printed at all is what holds the bound.
        let ppm = try #require(summary.firstMatch(of: /device clock ([+-]\d+\.\d) ppm against the system's/)?.1, "\(summary)")
        #expect(abs(Double(ppm)!) <= 1000, "\(summary)")
        #expect(try FLACTools.tags(output).contains("HARK_FIRST_SAMPLE_TIME=\(stamp)"))
    }
}
