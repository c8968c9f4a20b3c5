import AudioFormat
import Foundation
import Testing

/// What hark makes sure of before anything else: standard descriptors a caller closed, and a
/// command line it could only read changed.
@Suite struct ProcessStartTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// A shell running `script`, for what Process cannot do (close descriptors, pass
    /// bytes that are not UTF-8).
    private func runInShell(_ script: String, rig: ALSATestRig) throws -> ToolResult {
        try runTool("sh", ["-c", script], environment: rig.environment)
    }

    /// With stdin, stdout and stderr closed, the output took descriptor 2 (or 1) and hark's own
    /// lines (the notices, the summary) were written into the recording.
    @Test(arguments: ["flac", "wav", "opus"])
    func closedStandardDescriptorsKeepTheRecordingWhole(_ codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 24_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        // No GSettings schemas, so no desktop-switch helper takes a low descriptor first (a server).
        rig.extraEnvironment["XDG_DATA_DIRS"] = rig.directory.path
        rig.extraEnvironment["XDG_DATA_HOME"] = rig.directory.path
        for closed in ["<&- >&- 2>&-", "<&- 2>&-", ">&- 2>&-"] {
            let output = rig.path("closed.\(codec)")
            try? FileManager.default.removeItem(atPath: output)
            let result = try runInShell("exec \(harkCommand(["record", "-D", "filecap", "-d", "0.5", "-o", output])) \(closed)", rig: rig)
            #expect(result.status == 0, "\(closed)")
            switch codec {
            case "flac": try expectSameElements(FLACTools.decode(output, bitsPerSample: 16), signal.samples, closed)
            case "wav":
                let decoded = try WAVFile.read16Bit(Data(contentsOf: URL(fileURLWithPath: output)))
                expectSameElements(decoded.samples.map(Int32.init), signal.samples, closed)
            default:
                let info = try OpusTools.info(output)
                #expect(info.isClean, "\(closed): \(info.text)")
            }
        }
        // Standard output closed is still a failure for `-o -`, not audio poured into /dev/null.
        let toClosedStdout = try runInShell("exec \(harkCommand(["record", "-D", "filecap", "-d", "0.5", "-o", "-"])) >&-", rig: rig)
        #expect(toClosedStdout.status == 74, "\(toClosedStdout.standardError)")
        #expect(toClosedStdout.errorLines == ["hark: cannot write the output: Bad file descriptor"], "\(toClosedStdout.standardError)")
        // Named through its device link, it would reach the /dev/null standing in for it.
        let link = rig.path("to-stdout")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/stdout")
        defer { try? FileManager.default.removeItem(atPath: link) }
        for name in ["/dev/stdout", "/dev/fd/1", "/dev/fd/01", "/proc/self/fd/1", link] {
            let named = try runInShell("exec \(harkCommand(["record", "-D", "filecap", "-d", "0.5", "--format", "flac", "-o", name])) >&-", rig: rig)
            #expect(named.status == 73, "\(name): \(named.standardError)")
            #expect(named.errorLines == ["hark: cannot create '\(name)': standard output is closed"], "\(named.standardError)")
        }
    }

    /// A descriptor above the standard three named as the output (`-o /dev/fd/3`) and closed by
    /// the caller (`3>&-`) is refused before hark opens anything: hark's own first pipe took the
    /// number, and the recording went into it and never ended (neither `-d` nor Ctrl-C stopped it).
    @Test func aClosedDescriptorNamedAsTheOutputIsRefused() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        for name in ["/dev/fd/3", "/proc/self/fd/3"] {
            let command = "exec \(harkCommand(["record", "-D", "filecap", "-d", "0.5", "--format", "raw", "-o", name])) 3>&-"
            let result = try runTool("sh", ["-c", command], environment: rig.environment, timeout: TestLoad.seconds(30))
            #expect(result.status == 73, "\(name): \(result.standardError)")
            #expect(result.errorLines == ["hark: cannot create '\(name)': descriptor 3 is not open"], "\(result.standardError)")
        }
    }

    /// A file name that is not UTF-8 was read with its stray byte as U+FFFD: a recording to
    /// `\xff.flac` overwrote a file named `\u{FFFD}.flac`.
    @Test func anArgumentThatIsNotUTF8IsRefusedAndNoFileTouched() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 4_800).alsaBytes)
        let lookalike = rig.path("\u{FFFD}.flac")
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: lookalike))
        let script = "cd \(shellQuoted(rig.directory.path)) && exec \(harkCommand(["record", "-D", "filecap", "-d", "0.1", "-o"])) \"$(printf '\\377.flac')\""
        let result = try runInShell(script, rig: rig)
        #expect(result.status == 64)
        #expect(result.errorLines == ["hark: the argument '\\xff.flac' is not valid UTF-8; hark takes names and text in UTF-8 only"],
                "\(result.standardError)")
        #expect(FileManager.default.contents(atPath: lookalike) == Data("precious\n".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.directory.path).filter { $0.hasSuffix(".flac") } == ["\u{FFFD}.flac"])
        // A backslash typed in the name is shown doubled, so it cannot pass for a stray byte.
        let backslash = try runInShell("exec \(harkCommand(["record", "-D", "filecap", "-d", "0.1", "-o"])) \"$(printf 'x\\134y\\377.flac')\"", rig: rig)
        #expect(backslash.errorLines == ["hark: the argument 'x\\\\y\\xff.flac' is not valid UTF-8; hark takes names and text in UTF-8 only"],
                "\(backslash.standardError)")
        // So is a control character: an escape sequence beside the stray byte reached the terminal.
        let escape = try runInShell("exec \(harkCommand(["record", "-D", "filecap", "-d", "0.1", "-o"])) \"$(printf '\\033[2J\\377.flac')\"", rig: rig)
        #expect(escape.errorLines == ["hark: the argument '\\x1b[2J\\xff.flac' is not valid UTF-8; hark takes names and text in UTF-8 only"],
                "\(escape.standardError)")
    }
}
