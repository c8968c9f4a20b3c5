import AudioFormat
import Foundation
import Testing

/// Outputs that fail under hark: a full disk, a file-size limit, a reader that goes away, a reader
/// that stalls. The file stays valid up to the failure, and the user gets one line.
@Suite struct OutputFaultTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root (CI runs as root)"), arguments: ["flac", "opus"])
    func aFullDiskExits74WithAFileValidUpToTheFailure(_ codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 60 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let copy = rig.path("copied.\(codec)")
        try rig.withSmallDisk(size: "1m") { mountPoint in
            let output = mountPoint + "/full.\(codec)"
            // 60 s is 2.0 MB of FLAC, and of Opus at 256 kb/s: twice the disk.
            let result = try runHark(["record", "-D", "filecap", "-d", "60", "-o", output]
                                     + (codec == "opus" ? ["--bitrate", "256"] : []), rig: rig)
            #expect(result.status == 74, "\(result.standardError)")
            #expect(result.errorLines.last == "hark: cannot write the output: the disk is full", "\(result.standardError)")
            #expect(result.errorLines.filter { !$0.hasPrefix("hark: ● recording") && !$0.hasPrefix("hark: recorded") }.count == 1)
            // Decode a copy: the decoders write next to their input, and this disk is full.
            try FileManager.default.copyItem(atPath: output, toPath: copy)
        }
        try expectValidPrefix(copy, codec: codec, signal: signal)
    }

    @Test(arguments: ["flac", "opus"])
    func aFileSizeLimitExits74WithAFileValidUpToTheFailure(_ codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 60 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("limited.\(codec)")
        // ulimit -f counts 1024-byte blocks here: 512 KiB.
        let command = "ulimit -f 512; exec " + harkCommand(["record", "-D", "filecap", "-d", "60", "-o", output])
        let result = try runTool("sh", ["-c", command + (codec == "opus" ? " --bitrate 256" : "")], environment: rig.environment)
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.standardError.contains("hark: cannot write the output: the file is too large"), "\(result.standardError)")
        try expectValidPrefix(output, codec: codec, signal: signal)
    }

    @Test func aReaderThatGoesAwayStopsTheRecordingQuietly() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 30 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        let started = Date()
        let result = try runTool("bash", ["-c", harkCommand(["record", "-D", "pacedcap", "-o", "-"])
            + " 2> \(shellQuoted(rig.path("stderr.txt"))) | head -c 100000 > /dev/null; exit ${PIPESTATUS[0]}"],
                                 environment: rig.environment, timeout: 30)
        let seconds = Date().timeIntervalSince(started)
        let errors = (try String(contentsOfFile: rig.path("stderr.txt"), encoding: .utf8))
            .split(separator: "\n").map(String.init)
        #expect(result.status == 74, "\(errors)")
        #expect(errors.last == "hark: cannot write the output: the reader closed the pipe", "\(errors)")
        #expect(errors.count <= 3, "no error spam: \(errors)")
        // 100000 bytes of FLAC is about 1.5 s of this signal; PulseAudio's start adds up to 2 s.
        #expect(seconds < 6, "took \(seconds) s")
    }

    @Test func aReaderStalledFor2sLosesNothingWithTheDefaultRing() throws {
        let signal = TestSignal(format: Self.format, frames: 8 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("stalled.flac")
        // The reader takes nothing for 2 s, then everything.
        let result = try runTool("bash", ["-c", harkCommand(["record", "-D", "pacedcap", "-d", "5", "-o", "-"])
            + " 2> \(shellQuoted(rig.path("stderr.txt"))) | { sleep 2; cat > \(shellQuoted(output)); }"],
                                 environment: rig.environment, timeout: 30)
        #expect(result.status == 0)
        let errors = try String(contentsOfFile: rig.path("stderr.txt"), encoding: .utf8)
        #expect(errors.contains("240000 frames") && errors.contains("0 overruns (0 ms lost), 0 frames dropped"), "\(errors)")
        #expect(try FLACTools.decode(output, bitsPerSample: 16) == signal.prefix(frames: 240_000).map { $0 })
    }

    @Test func aTinyRingBehindAStalledReaderCountsDropsAndKeepsTheFileValid() throws {
        let signal = TestSignal(format: Self.format, frames: 10 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("dropped.flac")
        // A pipe holds about 2 s of this FLAC, and the ring at least four periods (0.68 s at the
        // default 125 ms): a 4.5 s stall overflows both.
        let result = try runTool("bash", ["-c", harkCommand(["record", "-D", "pacedcap", "-d", "7", "--ring-seconds", "0.05", "-o", "-"])
            + " 2> \(shellQuoted(rig.path("stderr.txt"))) | { sleep 4.5; cat > \(shellQuoted(output)); }"],
                                 environment: rig.environment, timeout: 30)
        #expect(result.status == 0)
        let errors = try String(contentsOfFile: rig.path("stderr.txt"), encoding: .utf8)
        let dropped = try #require(errors.range(of: #"[0-9]+ frames dropped"#, options: .regularExpression)
            .flatMap { Int(errors[$0].split(separator: " ")[0]) }, "\(errors)")
        #expect(dropped > 0, "\(errors)")
        let frames = try #require(summaryFrames(errors))
        #expect(frames + dropped == 336_000, "every captured frame is either in the file or counted as dropped")
        #expect(try FLACTools.decode(output, bitsPerSample: 16).count == frames * 2)
        let log = String(decoding: try runHark(["permissions", "log", "--json"], rig: rig).standardOutput, as: UTF8.self)
        #expect(log.contains("\"framesDropped\":\(dropped)"), "\(log)")
    }

    private func expectValidPrefix(_ output: String, codec: String, signal: TestSignal) throws {
        if codec == "flac" {
            let tested = try FLACTools.test(output)
            #expect(tested.status == 0, "\(tested.standardError)")
            let total = try #require(try FLACTools.totalSamples(output))
            let decoded = try FLACTools.decode(output, bitsPerSample: 16)
            #expect(total > 0 && decoded.count == total * 2, "STREAMINFO \(total) vs decoded \(decoded.count / 2)")
            #expect(decoded[...] == signal.prefix(frames: total))
            // The seek table was reserved at the start; only points inside what is left are filled in.
            let table = try #require(try SeekTableListing.read(output))
            #expect(!table.points.isEmpty)
            try expectSeekPointsNameTheirFrames(output, table)
        } else {
            let decoded = try OpusTools.decode(output)
            #expect(decoded.samples.count > 0)
        }
    }
}
