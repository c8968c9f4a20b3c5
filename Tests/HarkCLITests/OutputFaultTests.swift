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
            try expectValidPrefix(copy, codec: codec, signal: signal, result: result)
        }
    }

    @Test(arguments: ["flac", "opus"])
    func aFileSizeLimitExits74WithAFileValidUpToTheFailure(_ codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 60 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("limited.\(codec)")
        // dash's ulimit -f counts 512-byte blocks: 256 KiB.
        let command = "ulimit -f 512; exec " + harkCommand(["record", "-D", "filecap", "-d", "60", "-o", output])
        let result = try runTool("sh", ["-c", command + (codec == "opus" ? " --bitrate 256" : "")], environment: rig.environment)
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.standardError.contains("hark: cannot write the output: the file is too large"), "\(result.standardError)")
        try expectValidPrefix(output, codec: codec, signal: signal, result: result)
    }

    /// A file-size limit reached inside a write (raw and WAV write half a second or more at a
    /// time) keeps every whole frame that fitted: the limit's bytes less a torn frame, all of them
    /// the input's, and the summary counts them. (The write that found the limit was cut back
    /// whole: a raw file whose first write passed the limit was left empty, a WAV up to half a
    /// second short.) Three channels of S16, 6 bytes a frame, so 301 KiB ends inside a frame.
    @Test(arguments: ["raw", "wav"])
    func aFileSizeLimitKeepsEveryWholeFrameThatFitted(_ codec: String) throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 3, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 10 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("limited.\(codec)")
        let limit = 301 * 1024
        let command = "exec prlimit --fsize=\(limit) -- " + harkCommand(["record", "-D", "filecap", "-c", "3", "-d", "10", "-o", output])
        let result = try runTool("sh", ["-c", command], environment: rig.environment)
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.standardError.contains("hark: cannot write the output: the file is too large"), "\(result.standardError)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        let audioStart = codec == "wav" ? try #require(WAVLayout.dataOffset(bytes)) : 0
        let frames = (limit - audioStart) / format.bytesPerFrame
        #expect(bytes.count == audioStart + frames * format.bytesPerFrame, "\(bytes.count) bytes, the limit \(limit)")
        #expect(summaryFrames(result.standardError) == frames, "\(result.standardError)")
        expectSameElements(Data(bytes[audioStart...]), signal.alsaBytes.prefix(frames * format.bytesPerFrame))
        if codec == "wav" {
            #expect(WAVLayout.uint32(bytes, at: audioStart - 4) == frames * format.bytesPerFrame)
            try WAVAndRawOutputTests.expectLibsndfileReadsWithoutComplaint(output, frames: frames)
        }
    }

    /// A file-size limit below the header and the first second of audio fails at the start, as a
    /// disk too full for them does: exit 74, one line, nothing left behind and a file of that name
    /// kept. (The room set aside for that second is past the file's end, where the limit does not
    /// apply, so a FLAC, Opus or WAV of a fraction of a second, or a header alone, and an empty raw
    /// file replaced it.)
    @Test(arguments: ["flac", "opus", "wav", "raw"])
    func aFileSizeLimitBelowTheFirstSecondExits74AndKeepsWhatWasThere(_ codec: String) throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 2 * 48_000).alsaBytes)
        let folder = rig.path("takes")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let output = folder + "/limited.\(codec)"
        try "an earlier take".write(toFile: output, atomically: false, encoding: .utf8)
        let command = "exec prlimit --fsize=16384 -- " + harkCommand(["record", "-D", "filecap", "-d", "1", "-o", output])
        let result = try runTool("sh", ["-c", command], environment: rig.environment)
        #expect(result.status == 74, "\(result.standardError)")
        // (libpulse, which Debian's ALSA configuration loads, first says it could not size its shared memory.)
        #expect(result.errorLines.filter { !$0.hasPrefix("ftruncate() failed") }
                    == ["hark: cannot write the output: the file is too large (file size limit reached)"], "\(result.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["limited.\(codec)"])
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "an earlier take")
    }

    /// A recording shorter than a second needs room for its length only: 0.3 s under a 100 kB
    /// file-size limit (as a disk with 100 kB free; Opus 40 kB, as its second's worst case is
    /// 65 kB) was refused for want of room for a second.
    @Test(arguments: ["flac", "opus", "wav", "raw"])
    func aRecordingShorterThanASecondNeedsRoomForItsLengthOnly(_ codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("short.\(codec)")
        let command = "exec prlimit --fsize=\(codec == "opus" ? 40_000 : 100_000) -- "
            + harkCommand(["record", "-D", "filecap", "-d", "0.3", "-o", output])
        let result = try runTool("sh", ["-c", command], environment: rig.environment)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(summaryFrames(result.standardError) == 14_400, "\(result.standardError)")
        switch codec {
        case "flac": expectSameElements(try FLACTools.decode(output, bitsPerSample: 16)[...], signal.prefix(frames: 14_400))
        case "opus": #expect(try OpusTools.decode(output).samples.count == 14_400 * 2)
        default:
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
            let audioStart = codec == "wav" ? try #require(WAVLayout.dataOffset(bytes)) : 0
            expectSameElements(Data(bytes[audioStart...]), signal.alsaBytes.prefix(14_400 * Self.format.bytesPerFrame))
        }
    }

    @Test func aReaderThatGoesAwayStopsTheRecordingQuietly() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 30 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        // The shell notes when the reader has gone and when hark has exited, so hark's and
        // PulseAudio's start and the first 100000 bytes (about 1.5 s of this FLAC) do not count
        // against the stop.
        let left = shellQuoted(rig.path("reader-left")), exited = shellQuoted(rig.path("hark-exited"))
        let result = try runTool("bash", ["-c", harkCommand(["record", "-D", "pacedcap", "-o", "-"])
            + " 2> \(shellQuoted(rig.path("stderr.txt"))) | { head -c 100000 > /dev/null; date +%s.%N > \(left); }"
            + "; status=${PIPESTATUS[0]}; date +%s.%N > \(exited); exit $status"],
                                 environment: rig.environment, timeout: TestLoad.seconds(60))
        let errors = (try String(contentsOfFile: rig.path("stderr.txt"), encoding: .utf8))
            .split(separator: "\n").map(String.init)
        #expect(result.status == 74, "\(errors)")
        #expect(errors.last == "hark: cannot write the output: the reader closed the pipe", "\(errors)")
        #expect(errors.count <= 3, "no error spam: \(errors)")
        // hark finds the closed pipe at its next write (a FLAC frame every 85 ms of audio), then
        // finishes: it stops capture, writes the access log and exits.
        func time(_ name: String) throws -> Double {
            let text = try String(contentsOfFile: rig.path(name), encoding: .utf8)
            return try #require(Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), "\(name): \(text)")
        }
        let seconds = try time("hark-exited") - time("reader-left")
        print("OutputFaultTests: hark exited \(String(format: "%.3f", seconds)) s after its reader went away")
        #expect(seconds < TestLoad.seconds(2), "hark exited \(seconds) s after its reader went away")
    }

    /// A FIFO nobody reads yet is waited for, with a line saying so, as arecord waits for one. A
    /// stop signal ends the wait: exit 0, nothing recorded, nothing asked. (The open() blocked with
    /// the stop signals blocked: only SIGKILL ended it.) A reader that comes gets the recording,
    /// as a stream.
    /// SIGTERM: a background job of a non-interactive shell ignores SIGINT.
    @Test func aFIFOIsWaitedForUntilItHasAReaderAndAStopEndsTheWait() throws {
        let signal = TestSignal(format: Self.format, frames: 3 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let fifo = rig.path("live.fifo"), errors = shellQuoted(rig.path("stderr.txt"))
        #expect(mkfifo(fifo, 0o600) == 0)
        let untilWaiting = "until grep -q 'waiting for a program to open' \(errors); do sleep 0.05; done"
        let stopped = try runTool("bash", ["-c", harkCommand(["record", "-D", "filecap", "-d", "1", "-o", fifo, "--format", "wav"])
            + " 2> \(errors) & \(untilWaiting); kill -TERM $!; wait $!"], environment: rig.environment, timeout: TestLoad.seconds(30))
        let stoppedLines = try String(contentsOfFile: rig.path("stderr.txt"), encoding: .utf8)
        #expect(stopped.status == 0, "\(stoppedLines)")
        #expect(stoppedLines == "hark: waiting for a program to open '\(fifo)' for reading (Ctrl-C stops)\n"
                + "hark: stopped by SIGTERM while waiting for a program to open '\(fifo)' for reading: nothing was recorded\n",
                "\(stoppedLines)")
        #expect(!FileManager.default.fileExists(atPath: rig.accessLogFile), "nothing was recorded, so nothing logged")

        // Read as a stream is: no placeholders for the clock and the loudness, which a pipe
        // cannot have written over (they stayed, saying the recording was never finished).
        let received = rig.path("received.flac")
        let read = try runTool("bash", ["-c", harkCommand(["record", "-D", "filecap", "-d", "1", "-o", fifo, "--format", "flac"])
            + " 2> \(errors) & \(untilWaiting); cat \(shellQuoted(fifo)) > \(shellQuoted(received)); wait $!"],
                               environment: rig.environment, timeout: TestLoad.seconds(30))
        let readLines = try String(contentsOfFile: rig.path("stderr.txt"), encoding: .utf8)
        #expect(read.status == 0, "\(readLines)")
        expectSameElements(try FLACTools.decode(received, bitsPerSample: 16)[...], signal.prefix(frames: 48_000))
        let tags = try FLACTools.tags(received)
        #expect(!tags.contains { $0.hasPrefix("REPLAYGAIN") || $0.hasPrefix("HARK_FIRST_SAMPLE_TIME") }, "\(tags)")
    }

    /// A ring whose memory cannot be had (60 s of 768 kHz × 8 × 32-bit audio is 2 GiB, under a
    /// 2 GB address-space limit, less than the ring alone) is one line and exit 71, with the path left as it was: it was a
    /// fatal error and a backtrace. (Not under a sanitizer: its shadow memory needs terabytes of
    /// address space, which the limit forbids.)
    @Test(.enabled(if: TestLoad.sanitizer == nil, "a sanitizer's shadow memory cannot live under ulimit -v"))
    func ringMemoryThatCannotBeHadIsOneLineAndExit71() throws {
        let rig = try ALSATestRig(input: Data(count: 4096))
        let output = rig.path("big.raw")
        try "precious".write(toFile: output, atomically: false, encoding: .utf8)
        let command = "ulimit -v 2000000; exec " + harkCommand(["record", "-D", "filecap", "-r", "768000", "-c", "8", "-f", "S32_LE",
                                                                  "-d", "0.2", "--ring-seconds", "60", "-o", output])
        let result = try runTool("sh", ["-c", command], environment: rig.environment)
        #expect(result.status == 71, "\(result.standardError)")
        #expect(result.errorLines == ["hark: cannot have 2048 MiB of memory for the ring between capture and encoder "
                                      + "(S32_LE, 8 ch, 768000 Hz, --ring-seconds 60); ask for fewer seconds with --ring-seconds"],
                "\(result.standardError)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "precious")
    }

    /// A header that cannot be written is the same I/O error as a later write, not a set-up fault:
    /// exit 74, one line, and nothing left behind.
    @Test func aReaderGoneBeforeTheHeaderExits74AndRecordsNothing() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 2 * 48_000).alsaBytes)
        let hark = harkCommand(["record", "-D", "filecap", "-d", "1", "-o", "-"])
        let result = try runTool("bash", ["-c", readerGoneBeforeTheStart(hark)], environment: rig.environment)
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.errorLines == ["hark: cannot write the output: the reader closed the pipe"], "\(result.standardError)")
    }

    /// A disk too full for the header, or for the first second of audio after it (room set aside
    /// before the file replaces anything), fails at the start: exit 74, one line, nothing left
    /// behind and a file of that name kept. (Raw, with no header, replaced it with an empty file;
    /// FLAC and WAV with a header alone, when that fitted.)
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root (CI runs as root)"),
          arguments: ["flac", "opus", "wav", "raw"], [0, 16])
    func aDiskFullAtTheStartExits74AndKeepsWhatWasThere(_ codec: String, freeKibibytes: Int) throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 2 * 48_000).alsaBytes)
        try rig.withSmallDisk(size: "1m") { mountPoint in
            let output = mountPoint + "/full.\(codec)"
            try "an earlier take".write(toFile: output, atomically: false, encoding: .utf8)
            try fillDisk(mountPoint)
            if freeKibibytes > 0 {
                // A smaller filler: of the 1 MiB, the earlier take holds a 4 KiB page.
                try FileManager.default.removeItem(atPath: mountPoint + "/filler")
                _ = try runTool("dd", ["if=/dev/zero", "of=\(mountPoint)/filler", "bs=1024", "count=\(1024 - 4 - freeKibibytes)"])
            }
            let result = try runHark(["record", "-D", "filecap", "-d", "1", "-o", output], rig: rig)
            #expect(result.status == 74, "\(result.standardError)")
            #expect(result.errorLines == ["hark: cannot write the output: the disk is full"], "\(result.standardError)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).sorted() == ["filler", "full.\(codec)"])
            #expect(try String(contentsOfFile: output, encoding: .utf8) == "an earlier take")
        }
    }

    @Test func aReaderStalledFor2sLosesNothingWithTheDefaultRing() throws {
        let signal = TestSignal(format: Self.format, frames: 8 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("stalled.flac")
        // Once the pipe is full (hark's writes block from then on), the reader takes nothing for
        // 2 s, then everything. hark starts once the reader watches the pipe, so its writes are
        // held up for the 2 s, not also for the reader's own start.
        let ready = rig.path("reader-ready")
        let hark = harkCommand(["record", "-D", "pacedcap", "-d", "5", "-o", "-"]) + " 2> \(shellQuoted(rig.path("stderr.txt")))"
        let result = try runTool("bash", ["-c", afterReaderIsReady(ready, hark) + " | " + stallingReader(stallSeconds: 2, into: output, readyFile: ready)],
                                 environment: rig.environment, timeout: TestLoad.seconds(60))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("the pipe filled up"), "the stall came while hark was writing: \(result.standardError)")
        let errors = try String(contentsOfFile: rig.path("stderr.txt"), encoding: .utf8)
        // The reader's own stderr says how long it really stalled (longer than asked on a loaded
        // machine), to tell a ring too small from a capture thread held off the CPU.
        #expect(errors.contains("240000 frames") && errors.contains("0 overruns (0 ms lost), 0 frames dropped"),
                "\(errors)\n\(result.standardError)")
        try expectSameElements(FLACTools.decode(output, bitsPerSample: 16), signal.prefix(frames: 240_000).map { $0 })
    }

    @Test func aTinyRingBehindAStalledReaderCountsDropsAndKeepsTheFileValid() throws {
        let signal = TestSignal(format: Self.format, frames: 10 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("dropped.flac")
        // The ring holds at least four periods (0.68 s at the default 125 ms) and the device buffer
        // 0.5 s: a 3 s stall counted from the moment the pipe is full (hark's writes block) overflows
        // both, however long hark and PulseAudio took to start, and ends by about 4.5 s of the 7.
        let result = try runTool("bash", ["-c", harkCommand(["record", "-D", "pacedcap", "-d", "7", "--ring-seconds", "0.05", "-o", "-"])
            + " 2> \(shellQuoted(rig.path("stderr.txt"))) | " + stallingReader(stallSeconds: 3, into: output)],
                                 environment: rig.environment, timeout: TestLoad.seconds(60))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("the pipe filled up"), "the stall came while hark was writing: \(result.standardError)")
        let errors = try String(contentsOfFile: rig.path("stderr.txt"), encoding: .utf8)
        let dropped = try #require(errors.range(of: #"[0-9]+ frames? dropped"#, options: .regularExpression)
            .flatMap { Int(errors[$0].split(separator: " ")[0]) }, "\(errors)")
        #expect(dropped > 0, "\(errors)")
        let frames = try #require(summaryFrames(errors))
        #expect(frames + dropped == 336_000, "every captured frame is either in the file or counted as dropped")
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        #expect(decoded.count == frames * 2)
        // What is there is the input, in order, the dropped frames left out (not stale frames).
        expectInputInOrder(decoded, of: signal, dropped: dropped)
        let log = String(decoding: try runHark(["permissions", "log", "--json"], rig: rig).standardOutput, as: UTF8.self)
        #expect(log.contains("\"framesDropped\":\(dropped)"), "\(log)")
    }

    /// The same stall with `--pad-overruns`: the frames the tiny ring dropped are silence in their
    /// place, so the file is exactly `-d` long and the audio after the stall is where it happened
    /// (every decoded frame is the input's at that moment, or silence); the summary and the access
    /// log say the drops were padded.
    @Test func aTinyRingBehindAStalledReaderPadsItsDropsWithSilence() throws {
        let signal = TestSignal(format: Self.format, frames: 10 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("padded.flac")
        let result = try runTool("bash", ["-c", harkCommand(["record", "-D", "pacedcap", "-d", "7", "--ring-seconds", "0.05",
                                                             "--pad-overruns", "-o", "-"])
            + " 2> \(shellQuoted(rig.path("stderr.txt"))) | " + stallingReader(stallSeconds: 3, into: output)],
                                 environment: rig.environment, timeout: TestLoad.seconds(60))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("the pipe filled up"), "the stall came while hark was writing: \(result.standardError)")
        let errors = try String(contentsOfFile: rig.path("stderr.txt"), encoding: .utf8)
        let dropped = try #require(errors.range(of: #"[0-9]+ frames? dropped \(padded with silence\)"#, options: .regularExpression)
            .flatMap { Int(errors[$0].split(separator: " ")[0]) }, "\(errors)")
        #expect(dropped > 0, "\(errors)")
        #expect(summaryFrames(errors) == 336_000, "the file is as long as the capture: \(errors)")
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        #expect(decoded.count == 336_000 * 2)
        expectInputOrSilence(decoded, of: signal, dropped: dropped)
        let log = String(decoding: try runHark(["permissions", "log", "--json"], rig: rig).standardOutput, as: UTF8.self)
        #expect(log.contains("\"framesDropped\":\(dropped),\"framesDroppedPadded\":\(dropped)"), "\(log)")
        let text = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
        #expect(text.contains("dropped: \(dropped) frames (\(dropped) padded with silence)"), "\(text)")
    }

    /// A file-size limit that falls inside the last bytes of a split's first file: the split's
    /// finish fails (FLAC's last block and Ogg Opus's last pages are written only then). That file
    /// is cut back to what is whole and ended like any output whose write failed, its frames and
    /// bytes count in the summary, and no second file is begun. Before, the split let go of the
    /// file's codec before finishing it, so a FLAC file kept STREAMINFO's zero length and a torn
    /// last frame, and the summary said "0 frames, 0 bytes".
    @Test(arguments: ["flac", "opus"])
    func aFileSizeLimitReachedAsASplitFinishesAFileLeavesThatFileValid(_ codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 8 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        // Parts of 6 s, so the limit is above the room set aside for the first second at the
        // codec's worst (a smaller one fails at the start).
        let arguments = ["record", "-D", "filecap", "-d", "7.5", "--max-file-time", "6"]
        // The first file's size without a limit (its tags' times have a fixed length). FLAC's is
        // the same every run. Ogg Opus's is not, by tens of bytes: libopus analyses whatever audio
        // libopusenc has buffered past the frame it encodes, so a packet depends on how the
        // encoder loop's drains happened to cut the input (two runs here differed in the packets
        // at 1 s and 3.8 s, 11 and 18 bytes); under load the limit once missed the run's finish.
        let probe = try runHark(arguments + ["-o", rig.path("probe.\(codec)")], rig: rig)
        #expect(probe.status == 0, "\(probe.standardError)")
        let fullSize = try #require(try FileManager.default.attributesOfItem(atPath: rig.path("probe.\(codec)"))[.size] as? Int)
        // Inside the file's last writes, which its finish makes: FLAC's last block, 16 bytes short;
        // Opus's last pages (libopusenc holds up to 200 ms until the end: about 3 kB here), 1000.
        let output = rig.path("limited.\(codec)")
        let command = "exec prlimit --fsize=\(fullSize - (codec == "flac" ? 16 : 1000)) -- " + harkCommand(arguments + ["-o", output])
        let result = try runTool("sh", ["-c", command], environment: rig.environment)
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.standardError.contains("hark: cannot write the output: the file is too large"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: rig.path("limited-2.\(codec)")))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
        #expect(size > 0 && size < fullSize)
        #expect(result.standardError.contains(", \(size) bytes"), "the summary counts the file: \(result.standardError)")
        // And the frames it holds, exactly (for Ogg Opus, its last whole page's granule position).
        try expectValidPrefix(output, codec: codec, signal: signal, result: result)
    }

    /// The file decodes, up to the failure, to the input, and the summary counts what it holds.
    private func expectValidPrefix(_ output: String, codec: String, signal: TestSignal, result: ToolResult) throws {
        let summary = summaryFrames(result.standardError)
        if codec == "flac" {
            let tested = try FLACTools.test(output)
            #expect(tested.status == 0, "\(tested.standardError)")
            let total = try #require(try FLACTools.totalSamples(output))
            let decoded = try FLACTools.decode(output, bitsPerSample: 16)
            #expect(total > 0 && decoded.count == total * 2, "STREAMINFO \(total) vs decoded \(decoded.count / 2)")
            expectSameElements(decoded[...], signal.prefix(frames: total))
            #expect(summary == total, "\(result.standardError)")
            // The seek table was reserved at the start; only points inside what is left are filled in.
            let table = try #require(try SeekTableListing.read(output))
            #expect(!table.points.isEmpty)
            try expectSeekPointsNameTheirFrames(output, table)
        } else {
            let decoded = try OpusTools.decode(output)
            #expect(decoded.samples.count > 0)
            // The last whole page's granule position, not the frames given to libopusenc (up to a
            // drain more or `--max-delay` fewer).
            #expect(summary == decoded.samples.count / decoded.channels, "\(result.standardError)")
            // Ended, not cut off: the last whole page carries the end-of-stream flag (opusinfo
            // warned "EOS not set" and `hark repair` offered to add it).
            let info = try OpusTools.info(output)
            #expect(info.isClean, "\(info.text)")
        }
    }
}
