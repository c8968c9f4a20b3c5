import AudioFormat
import Foundation
import Testing

/// The runnable examples in samples/, run as a user would (the built hark, the rig's devices,
/// a few seconds instead of an hour).
@Suite struct SamplesTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let samples = harkBinary.deletingLastPathComponent()  // .build/<config>
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("samples")

    func run(_ script: String, _ arguments: [String], rig: ALSATestRig, extra: [String: String] = [:]) throws -> ToolResult {
        var environment = rig.environment
        environment["HARK"] = harkBinary.path
        environment["HARK_DEVICE"] = "filecap"
        environment.merge(extra) { $1 }
        return try RunningProcess(Self.samples.appendingPathComponent(script), arguments, environment: environment,
                                  scratch: rig.directory).wait(timeout: 60)
    }

    @Test func meetingSplitsIntoPartsThatAddUpBitExact() throws {
        let signal = TestSignal(format: Self.format, frames: 6 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let result = try run("meeting.sh", ["1", rig.path("meeting")], rig: rig,
                             extra: ["MEETING_PART_SECONDS": "2", "MEETING_SECONDS": "5"])
        #expect(result.status == 0, "\(result.standardError)")
        // In recording order, by the frame each part starts at: the names carry the minute each
        // part starts in, so parts that straddle a minute (one run in thirty) are "-1941.flac",
        // "-1941-2.flac", "-1942.flac", which no order of the names alone puts right.
        let names = try FileManager.default.contentsOfDirectory(atPath: rig.path("meeting"))
        #expect(names.count == 3 && names.allSatisfy { $0.hasPrefix("meeting-") && $0.hasSuffix(".flac") }, "\(names)")
        let parts = try names.map { name in
            let tag = try FLACTools.metaflac(["--show-tag=HARK_FIRST_SAMPLE", rig.path("meeting/\(name)")])
            return (name, try #require(Int(tag.dropFirst("HARK_FIRST_SAMPLE=".count)), "\(name): \(tag)"))
        }.sorted { $0.1 < $1.1 }.map(\.0)
        var joined: [Int32] = []
        for part in parts { joined += try FLACTools.decode(rig.path("meeting/\(part)"), bitsPerSample: 16) }
        expectSameElements(joined[...], signal.prefix(frames: 5 * 48_000))
        #expect(try FLACTools.metaflac(["--show-tag=TITLE", rig.path("meeting/\(parts[0])")]) == "TITLE=Meeting")
    }

    @Test func pipeOpusDecodesOnTheOtherEndOfThePipe() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 3 * 48_000).alsaBytes)
        let result = try run("pipe-opus.sh", ["2", rig.path("piped.wav")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let wav = try Data(contentsOf: URL(fileURLWithPath: rig.path("piped.wav")))
        let decoded = try WAVFile.read16Bit(wav)
        #expect(decoded.channels == 2 && decoded.samples.count / 2 == 2 * 48_000, "\(decoded.samples.count / 2) frames")
    }

    @Test func theSignalGeneratorIsDeterministicAndMatchesTheTests() throws {
        let tool = harkBinary.deletingLastPathComponent().appendingPathComponent("hark-signal")
        let rig = try ALSATestRig(input: Data())
        let first = try RunningProcess(tool, ["2"], environment: rig.environment, scratch: rig.directory).wait()
        let second = try RunningProcess(tool, ["2"], environment: rig.environment, scratch: rig.directory).wait()
        #expect(first.status == 0 && first.standardOutput.count == 2 * 48_000 * 4)
        expectSameElements(first.standardOutput, second.standardOutput, "the same bytes on every run")
        expectSameElements(first.standardOutput.prefix(48_000 * 4), TestSignal(format: Self.format, frames: 48_000).alsaBytes,
                           "its first second is the tests' signal, sample for sample")
    }

    @Test func theVirtualMicrophoneFeedsTheDefaultDevice() throws {
        // samples/virtual-mic.sh on a private state dir: start, record 2 s from ALSA's "default"
        // through it, stop. The sample signal is music, not silence.
        let rig = try ALSATestRig(input: Data())
        let state = rig.path("vmic")
        var environment = rig.environment
        environment["HARK_VMIC_DIR"] = state
        environment.removeValue(forKey: "ALSA_CONFIG_PATH")  // Debian's own configuration: default → PulseAudio
        let script = Self.samples.appendingPathComponent("virtual-mic.sh")
        func vmic(_ command: String) throws -> ToolResult {
            let (program, arguments) = detachedFromTheTest(script, [command])
            return try RunningProcess(program, arguments, environment: environment, scratch: rig.directory).wait(timeout: 60)
        }
        let started = try vmic("start")
        defer { _ = try? vmic("stop") }
        #expect(started.status == 0, "\(started.standardError)")
        let exports = try vmic("env")
        for line in String(decoding: exports.standardOutput, as: UTF8.self).split(separator: "\n") {
            // export NAME='value' (or "value", or bare)
            guard let match = line.firstMatch(of: /^export ([A-Z_]+)=['"]?([^'"]*)['"]?$/) else { continue }
            environment[String(match.1)] = String(match.2)
        }
        // `start` returns once the player loop runs, not once its paplay plays: on a loaded
        // machine the first two seconds of the monitor could still be silence. Wait for the
        // player's stream on the sink (it then plays for 10 s, and again after a short gap).
        let deadline = Date().addingTimeInterval(30)
        var streams = ""
        repeat {
            let inputs = try runTool("pactl", ["list", "sink-inputs", "short"], environment: environment)
            streams = String(decoding: inputs.standardOutput, as: UTF8.self)
            if !streams.isEmpty { break }
            usleep(100_000)
        } while Date() < deadline
        try #require(!streams.isEmpty, "no player stream on the virtual microphone's sink within 30 s")
        let output = rig.path("vmic.flac")
        let result = try RunningProcess(harkBinary, ["record", "-d", "2", "-o", output], environment: environment,
                                        scratch: rig.directory).wait(timeout: 30)
        #expect(result.status == 0, "\(result.standardError)")
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        #expect(decoded.count == 2 * 48_000 * 2)
        #expect(decoded.contains { abs($0) > 1_000 }, "the virtual microphone plays music, not silence")
        let stopped = try vmic("stop")
        #expect(stopped.status == 0, "\(stopped.standardError)")
        let status = try vmic("status")
        #expect(status.status == 1, "stopped for good")
    }
}
