import AudioFormat
import Foundation
import Testing

/// `-o` through a symbolic link writes where the link points, as `arecord` and `flac -o` do, and
/// keeps the link; two `-o` that reach one file are a usage error however they are spelled.
/// Before 2026-11-26 the finished file was renamed onto the link itself, replacing it with a
/// regular file and leaving its target as it was; and `-o x.flac -o ./x.flac` failed with "File
/// exists", `-o x.flac -o link-to-x.flac` wrote both.
@Suite struct OutputPathTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    @Test func aSymbolicLinkIsWrittenThroughAndKept() throws {
        let signal = TestSignal(format: Self.format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try FileManager.default.createDirectory(atPath: rig.path("archive"), withIntermediateDirectories: true)
        // Relative, and dangling until the first recording creates its target.
        try FileManager.default.createSymbolicLink(atPath: rig.path("take.flac"), withDestinationPath: "archive/take-1.flac")
        for _ in 0..<2 {  // creating the target, then replacing it
            let result = try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("take.flac")], rig: rig)
            #expect(result.status == 0, "\(result.standardError)")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: rig.path("take.flac")) == "archive/take-1.flac")
            #expect(try expectFinishedPrefix(rig.path("archive/take-1.flac"), of: signal) == 24_000)
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: rig.path("archive")).filter { $0.contains(".hark-") }
        #expect(leftovers.isEmpty, "\(leftovers)")

        let same = try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("archive/take-1.flac"), "-o", rig.path("take.flac")],
                               rig: rig)
        #expect(same.status == 64, "\(same.standardError)")
        #expect(same.standardError.contains("take.flac' is the same file as -o '"), "\(same.standardError)")
    }

    /// `/dev/stdout`, `/dev/fd/1` and `/proc/self/fd/1` are standard output, as `-o -` is. Beside
    /// `-o -` they are the same output given twice. Redirected to a file, the recording goes into
    /// the file the shell opened, finished in place. Before 2026-11-29 either was taken as a file
    /// path: beside `-o -` two streams went into one pipe, and with `> file` hark made a new file
    /// under that name, replacing the shell's, and warned that its output had been moved.
    @Test func namesOfStandardOutputAreStandardOutput() throws {
        let signal = TestSignal(format: Self.format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("redirected.flac")
        for name in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
            let twice = try runHark(["record", "-D", "filecap", "-d", "0.1", "-o", "-", "-o", name], rig: rig)
            expectOneLineFailure(twice, exitCode: 64, mentioning: "hark: -o '\(name)' is stdout, as -o - is; stdout can carry one stream")
            #expect(FileManager.default.createFile(atPath: output, contents: nil))
            let inode = try #require(try FileManager.default.attributesOfItem(atPath: output)[.systemFileNumber] as? Int)
            let command = harkCommand(["record", "-D", "filecap", "-d", "0.5", "-o", name, "--format", "flac"]) + " > " + shellQuoted(output)
            let result = try runTool("sh", ["-c", command], environment: rig.environment)
            #expect(result.status == 0, "\(name): \(result.standardError)")
            #expect(result.errorLines.count == 2, "\(name): only the start and the summary: \(result.standardError)")
            #expect(result.standardError.contains(" to stdout"), "\(name): \(result.standardError)")
            #expect(try FileManager.default.attributesOfItem(atPath: output)[.systemFileNumber] as? Int == inode,
                    "\(name): the file the shell opened holds the recording")
            #expect(try expectFinishedPrefix(output, of: signal) == 24_000, "\(name)")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: rig.directory.path).filter { $0.contains(".hark-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// Standard output redirected to a file that already holds another program's output (`{ echo
    /// …; hark record -o -; } > file`): hark's stream follows it, and the summary counts hark's
    /// bytes alone (it counted the ones before them too). Salvaged after a size limit, a FLAC
    /// stream there gets its STREAMINFO's length where the stream starts, and an Ogg Opus one its
    /// end-of-stream flag: the shell's `>` opens the file write-only, and the salvage could not read
    /// back what it patches (a FLAC kept length 0; its patch would have gone 7 bytes early).
    @Test func standardOutputAfterAnotherProgramsOutputCountsOnlyHarks() throws {
        let signal = TestSignal(format: Self.format, frames: 5 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("after-header.raw")
        let command = "{ printf 'HEADER\\n'; " + harkCommand(["record", "-D", "filecap", "-d", "0.5", "-o", "-", "--format", "raw"])
            + "; } > " + shellQuoted(output)
        let result = try runTool("sh", ["-c", command], environment: rig.environment)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("24000 frames, 96000 bytes to stdout"), "\(result.standardError)")
        try expectSameElements(Data(contentsOf: URL(fileURLWithPath: output)), Data("HEADER\n".utf8) + signal.alsaBytes.prefix(96_000))

        for codec in ["flac", "opus"] {
            let limited = rig.path("after-header-\(codec).with-header")
            let command = "{ printf 'HEADER\\n'; exec prlimit --fsize=300000 -- "
                + harkCommand(["record", "-D", "filecap", "-d", "5", "-o", "-", "--format", codec] + (codec == "opus" ? ["--bitrate", "512"] : []))
                + "; } > " + shellQuoted(limited)
            let salvaged = try runTool("sh", ["-c", command], environment: rig.environment)
            #expect(salvaged.status == 74, "\(salvaged.standardError)")
            let stream = rig.path("after-header.\(codec)")
            try Data(contentsOf: URL(fileURLWithPath: limited)).dropFirst(7).write(to: URL(fileURLWithPath: stream))
            let frames = try #require(summaryFrames(salvaged.standardError), "\(salvaged.standardError)")
            if codec == "flac" {
                #expect(try FLACTools.test(stream).status == 0, "\(salvaged.standardError)")
                #expect(try FLACTools.totalSamples(stream) == frames, "\(salvaged.standardError)")
                try expectSameElements(FLACTools.decode(stream, bitsPerSample: 16)[...], signal.prefix(frames: frames))
            } else {
                let info = try OpusTools.info(stream)
                #expect(info.isClean, "\(info.text)")
                let decoded = try OpusTools.decode(stream)
                #expect(frames > 0 && decoded.samples.count / decoded.channels == frames, "\(salvaged.standardError)")
            }
        }
    }

    /// stderr carries hark's messages, so `-o /dev/stderr` is a usage error (redirected to a file,
    /// the messages went into the recording); a terminal named as a file (`/dev/tty`) is refused as
    /// stdout on a terminal is, where the audio went to the screen.
    @Test func stderrAndTerminalsAreNoOutput() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 4_800).alsaBytes)
        for name in ["/dev/stderr", "/dev/fd/2"] {
            let result = try runHark(["record", "-D", "filecap", "-d", "0.1", "--format", "raw", "-o", name], rig: rig)
            expectOneLineFailure(result, exitCode: 64, mentioning: "hark: -o '\(name)' is stderr, where hark writes its messages")
        }
        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "0.1", "--format", "raw", "-o", "/dev/tty"]), rig: rig)
        let result = session.finish()
        #expect(result.status == 73, "\(result.screen)")
        #expect(result.screen.contains("hark: cannot create '/dev/tty': it is a terminal; give a file, or -o - and a pipe"), "\(result.screen)")
    }

    /// Links that lead round in a circle reach no file: refused as `flac -o` refuses them (ELOOP),
    /// where the finished file was renamed over the first link, replacing it.
    @Test func linksInACircleAreRefusedAndKept() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 4_800).alsaBytes)
        try FileManager.default.createSymbolicLink(atPath: rig.path("loop1"), withDestinationPath: "loop2")
        try FileManager.default.createSymbolicLink(atPath: rig.path("loop2"), withDestinationPath: "loop1")
        let result = try runHark(["record", "-D", "filecap", "-d", "0.1", "--format", "flac", "-o", rig.path("loop1")], rig: rig)
        #expect(result.status == 73)
        #expect(result.errorLines == ["hark: cannot create '\(rig.path("loop1"))': Too many levels of symbolic links"], "\(result.standardError)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: rig.path("loop1")) == "loop2", "the link stays")
    }

    /// Files named like a split's parts of /dev/null (`null-2`, …) in /dev: what a device output
    /// split into files left there before 2026-11-27.
    static func filesBesideDevNull() -> Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("null-") })
    }

    /// A FIFO or a device is written in place, as one stream: `--max-file-time` cannot split it
    /// (it made regular files beside it, `/dev/null-2`, `/dev/null-3`, …), and is refused before
    /// anything is opened; SIGUSR1 and sound-activated segments go into the one stream, as for
    /// stdout (`SoundActivationTests`).
    @Test func aFIFOOrADeviceIsNeverSplitIntoFilesBesideIt() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 3 * 48_000).alsaBytes)
        let fifo = rig.path("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let besideDevNull = Self.filesBesideDevNull()
        for output in ["/dev/null", fifo] {
            let result = try runHark(["record", "-D", "filecap", "-d", "3", "--max-file-time", "1", "-o", output, "--format", "raw"], rig: rig)
            expectOneLineFailure(result, exitCode: 64, mentioning: "--max-file-time splits into files, and '\(output)' is not a regular file")
        }
        #expect(Self.filesBesideDevNull().subtracting(besideDevNull).isEmpty)
        let made = try FileManager.default.contentsOfDirectory(atPath: rig.directory.path).filter { $0.hasPrefix("fifo") }
        #expect(made == ["fifo"], "\(made)")
    }
}
