import AudioFormat
import Foundation
import Testing

/// Every mistake a user can make gets one line on stderr naming the problem, the documented exit
/// code, nothing on stdout, and no file left behind.
@Suite struct UsageErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let exitCode: Int32
        let mentions: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let invalidValues: [Case] = [
        Case(arguments: ["-r", "abc"], exitCode: 64, mentions: "'abc' is invalid for '-r <hz>'"),
        Case(arguments: ["-r", "0"], exitCode: 64, mentions: "rate 0 Hz"),
        Case(arguments: ["-r", "800000"], exitCode: 64, mentions: "rate"),
        Case(arguments: ["-c", "0"], exitCode: 64, mentions: "channels 0"),
        Case(arguments: ["-c", "9"], exitCode: 64, mentions: "channels 9"),
        Case(arguments: ["-c", "two"], exitCode: 64, mentions: "'two' is invalid for '-c <n>'"),
        Case(arguments: ["-d", "-1"], exitCode: 64, mentions: "'-1' is invalid for '-d <duration>'"),
        Case(arguments: ["-d", "0.00001"], exitCode: 64, mentions: "shorter than one sample at 48000 Hz"),
        Case(arguments: ["--compression-level", "-1"], exitCode: 64, mentions: "compression level -1 is outside 0–8"),
        Case(arguments: ["-r", "-5"], exitCode: 64, mentions: "rate -5 Hz is outside"),
        Case(arguments: ["-F", "5000", "-B", "4000"], exitCode: 64, mentions: "buffer time 4000 µs must be at least twice"),
        Case(arguments: ["--max-file-time", "-3"], exitCode: 64, mentions: "--max-file-time"),
        Case(arguments: ["--complexity", "-1"], exitCode: 64, mentions: "complexity -1 is outside 0–10"),
        Case(arguments: ["--max-delay", "-1"], exitCode: 64, mentions: "max delay -1 ms is outside 0–1000"),
        Case(arguments: ["-d", "0"], exitCode: 64, mentions: "duration"),
        Case(arguments: ["-d", "soon"], exitCode: 64, mentions: "'soon' is invalid for '-d <duration>'"),
        Case(arguments: ["-d", "0ms"], exitCode: 64, mentions: "duration must be a positive number"),
        Case(arguments: ["-r", "8000", "-d", "0.01ms"], exitCode: 64, mentions: "duration 0.01ms is shorter than one sample at 8000 Hz"),
        Case(arguments: ["-d", "9000h"], exitCode: 64, mentions: "duration 9000h is longer than a year"),
        Case(arguments: ["-d", "nan"], exitCode: 64, mentions: "duration"),
        Case(arguments: ["-f", "S8"], exitCode: 64, mentions: "sample format 'S8'"),
        Case(arguments: ["--compression-level", "9"], exitCode: 64, mentions: "compression level 9"),
        Case(arguments: ["--period-time", "10"], exitCode: 64, mentions: "period time"),
        Case(arguments: ["--buffer-time", "30000"], exitCode: 64, mentions: "buffer time"),
        Case(arguments: ["--format", "mp3"], exitCode: 64, mentions: "mp3"),
        Case(arguments: ["--bogus"], exitCode: 64, mentions: "--bogus"),
        Case(arguments: ["-D", ""], exitCode: 64, mentions: "-D needs a device name"),
        Case(arguments: ["-v", "-q"], exitCode: 64, mentions: "--quiet"),
        Case(arguments: ["-d", "1e12"], exitCode: 64, mentions: "longer than a year"),
        Case(arguments: ["-d", "inf"], exitCode: 64, mentions: "duration"),
        Case(arguments: ["-r", "44100.5"], exitCode: 64, mentions: "'44100.5' is invalid for '-r <hz>'"),
        Case(arguments: ["-c", "-1"], exitCode: 64, mentions: "channels -1 is outside 1–8"),
        Case(arguments: ["--tag", ""], exitCode: 64, mentions: "tag '' is not KEY=VALUE"),
        Case(arguments: ["--tag", "=value"], exitCode: 64, mentions: "tag '=value' is not KEY=VALUE"),
        Case(arguments: ["--tag", "TITLE"], exitCode: 64, mentions: "tag 'TITLE' is not KEY=VALUE"),
        Case(arguments: ["--tag", "TÍTLE=x"], exitCode: 64, mentions: "printable ASCII (0x20–0x7D), and 'Í' is not"),
        Case(arguments: ["--tag", "KEY~=x"], exitCode: 64, mentions: "and '~' is not"),
        Case(arguments: ["--tag", "A\u{7}B=x"], exitCode: 64, mentions: "tag 'A\\x07B=x' is not KEY=VALUE"),
        // A newline in a value was where the message was cut (to drop the parser's value lists).
        Case(arguments: ["--tag", "A\nB=x"], exitCode: 64, mentions: "tag 'A\\nB=x' is not KEY=VALUE: a key is printable ASCII"),
        Case(arguments: ["--bitrate", "9\u{1B}[2J\n6"], exitCode: 64, mentions: "The value '9\\x1b[2J\\n6' is invalid for '--bitrate"),
        Case(arguments: ["--ring-seconds", "0"], exitCode: 64, mentions: "ring size 0.0 s is outside 0.05–60"),
        Case(arguments: ["--bitrate", "96"], exitCode: 64, mentions: "--bitrate applies to Opus output"),
        Case(arguments: ["--cvbr"], exitCode: 64, mentions: "--cvbr applies to Opus output"),
        Case(arguments: ["-f", "S24_3LE"], exitCode: 64, mentions: "sample format 'S24_3LE'"),
        Case(arguments: ["--period-time", "300000", "--buffer-time", "400000"], exitCode: 64, mentions: "at least twice the period"),
        Case(arguments: ["extra-argument"], exitCode: 64, mentions: "extra-argument"),
        Case(arguments: ["--max-size", "10"], exitCode: 64, mentions: "under the 64k (65536-byte) minimum"),
        Case(arguments: ["--max-size", "64kB"], exitCode: 64, mentions: "--max-size 64kB is 64000 bytes, under the 64k (65536-byte) minimum"),
        Case(arguments: ["--max-size", "lots"], exitCode: 64, mentions: "'lots' is invalid for '--max-size <size>'"),
        Case(arguments: ["--max-size", "-5M"], exitCode: 64, mentions: "--max-size"),
        Case(arguments: ["--max-file-time", "0.5"], exitCode: 64, mentions: "--max-file-time must be at least 1 second"),
        Case(arguments: ["--max-file-time", "500ms"], exitCode: 64, mentions: "--max-file-time must be at least 1 second"),
        Case(arguments: ["--max-file-time", "soon"], exitCode: 64, mentions: "'soon' is invalid for '--max-file-time <duration>'"),
        Case(arguments: ["-F", "2000000"], exitCode: 64, mentions: "needs a buffer (-B) of at least twice it; the buffer is 500000 µs"),
        // A layout the user named that Opus cannot carry (found once the device was open until 2026-11-29).
        Case(arguments: ["-c", "2", "--channel-map", "FC,LFE", "--format", "opus"], exitCode: 64,
             mentions: "hark: FC,LFE cannot be kept in Opus, whose 2-channel stream means FL and FR (stereo); record FLAC or WAV, which keep it"),
        Case(arguments: ["-c", "6", "--channel-map", "FL,FR,FC,LFE,FLC,FRC", "--format", "opus"], exitCode: 64,
             mentions: "hark: FL,FR,FC,LFE,FLC,FRC is not one of Opus's surround layouts (RFC 7845 mapping family 1); name one with --channel-map"),
    ]

    @Test(arguments: invalidValues)
    func invalidValueIsOneLineAndExit64(_ testCase: Case) throws {
        let rig = try ALSATestRig(input: Data())
        let output = rig.path("never.flac")
        let result = try runHark(["record", "-D", "filecap", "-o", output] + testCase.arguments, rig: rig)
        expectOneLineFailure(result, exitCode: testCase.exitCode, mentioning: testCase.mentions)
        #expect(try leftoverFiles(in: rig).isEmpty)
    }

    /// /proc refuses new files even to root, with ENOENT: the reason names the file system, not a
    /// missing folder (until 2026-11-29 "the directory does not exist", for /proc itself).
    @Test func unwritableOutputExits73() throws {
        let rig = try ALSATestRig(input: Data())
        for name in ["/proc/hark-test.flac", "/proc/version"] {
            let result = try runHark(["record", "-D", "filecap", "-d", "1", "--format", "flac", "-o", name], rig: rig)
            expectOneLineFailure(result, exitCode: 73, mentioning: "cannot create '\(name)': its folder's file system takes no new files")
        }
        let missing = rig.path("no-such-folder/x.flac")
        let result = try runHark(["record", "-D", "filecap", "-d", "1", "-o", missing], rig: rig)
        expectOneLineFailure(result, exitCode: 73, mentioning: "cannot create '\(missing)': the directory does not exist")
    }

    @Test func invalidArgumentsNeverReachThePermissionGate() throws {
        // Undecided and without a terminal: anything that reached the gate would exit 77.
        let rig = try ALSATestRig(input: Data(), grantMicrophone: false)
        for testCase in Self.invalidValues {
            let result = try RunningProcess(URL(fileURLWithPath: findOnPath("setsid") ?? "/usr/bin/setsid"),
                                            ["-w", harkBinary.path, "record", "-D", "filecap", "-o", rig.path("x.flac")]
                                                + testCase.arguments,
                                            environment: rig.environment, scratch: rig.directory).wait()
            #expect(result.status == testCase.exitCode, "\(testCase.arguments): \(result.standardError)")
        }
    }

    @Test func unknownExtensionWithoutFormatIsAUsageError() throws {
        let rig = try ALSATestRig(input: Data())
        let result = try runHark(["record", "-D", "filecap", "-d", "1", "-o", rig.path("take.mp3")], rig: rig)
        expectOneLineFailure(result, exitCode: 64, mentioning: "name it .flac, .opus, .ogg, .wav, .raw or .pcm, or add --format")
        #expect(try leftoverFiles(in: rig).isEmpty)
    }

    @Test func withoutOutputTheLibraryMustBeAllowedFirst() throws {
        // No -o means the recordings library; undecided and without a terminal, that is exit 77.
        let rig = try ALSATestRig(input: Data())
        let result = try runHark(["record", "-D", "filecap", "-d", "1"], rig: rig)
        expectOneLineFailure(result, exitCode: 77, mentioning: "allow it with 'hark permissions grant recordings'")
        #expect(!FileManager.default.fileExists(atPath: rig.path("Recordings")))
    }

    @Test func unknownDeviceExits69AndSuggestsDevices() throws {
        let rig = try ALSATestRig(input: Data())
        let result = try runHark(["record", "-D", "no_such_pcm", "-d", "1", "-o", rig.path("x.flac")], rig: rig)
        expectOneLineFailure(result, exitCode: 69, mentioning: "hark devices")
        #expect(try leftoverFiles(in: rig).isEmpty)
    }

    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/snd"), "a sound card provides a default device"))
    func noSoundCardAndNoServerExits69() throws {
        let rig = try ALSATestRig(input: Data())
        let result = try runHark(["record", "-d", "1", "-o", rig.path("x.flac")], rig: rig)
        expectOneLineFailure(result, exitCode: 69, mentioning: "no capture device")
        #expect(try leftoverFiles(in: rig).isEmpty)
    }

    @Test func existingFileSurvivesAFailedStart() throws {
        let rig = try ALSATestRig(input: Data())
        let output = rig.path("keep.flac")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: output))
        let result = try runHark(["record", "-D", "no_such_pcm", "-o", output], rig: rig)
        #expect(result.status == 69)
        try expectSameElements(Data(contentsOf: URL(fileURLWithPath: output)), Data("precious".utf8))
    }

    @Test func outputInAMissingDirectoryExits73BeforeTheDeviceIsOpened() throws {
        let rig = try ALSATestRig(input: Data())
        // The device does not exist either (an ALSA name, card 9): 73, not 69, shows the output is
        // checked before the device is opened. (A name that is not ALSA's is resolved among the sound
        // server's sources before that, as an argument: UsageErrorTests.unknownDeviceExits69….)
        let result = try runHark(["record", "-D", "hw:9", "-o", rig.path("missing/dir/x.flac")], rig: rig)
        expectOneLineFailure(result, exitCode: 73, mentioning: "does not exist")
    }

    @Test func outputThatIsADirectoryExits73() throws {
        let rig = try ALSATestRig(input: Data())
        let directory = rig.path("folder.flac")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let result = try runHark(["record", "-D", "filecap", "-o", directory], rig: rig)
        expectOneLineFailure(result, exitCode: 73, mentioning: "directory")
    }

    @Test func audioIsNeverWrittenToATerminal() throws {
        let rig = try ALSATestRig(input: Data())
        // `script` runs hark with a pseudo-terminal as its stdout and stderr.
        let command = "\(harkBinary.path) record -D filecap -d 1 -o -"
        let result = try runTool("script", ["-q", "-e", "-c", command, "/dev/null"], environment: rig.environment)
        #expect(result.status == 64)
        let text = String(decoding: result.standardOutput, as: UTF8.self)
        #expect(text.contains("hark: stdout is a terminal"), "\(text)")
        #expect(!text.contains("fLaC"))
    }

    /// A usage error points to the help that lists the options it is about: `hark --help` lists
    /// only the subcommands.
    @Test func aUsageErrorNamesTheSubcommandsHelp() throws {
        let rig = try ALSATestRig(input: Data())
        for (arguments, help) in [(["record", "-D", "filecap", "-r", "999", "-o", rig.path("x.flac")], "hark record --help"),
                                  (["permissions", "log", "--bogus"], "hark permissions log --help"),
                                  (["repair", "--bogus"], "hark repair --help"),
                                  (["--bogus"], "hark --help")] {
            let result = try runHark(arguments, rig: rig)
            expectOneLineFailure(result, exitCode: 64, mentioning: "(see '\(help)')")
        }
    }

    @Test func helpGoesToStdoutAndExits0() throws {
        let rig = try ALSATestRig(input: Data())
        let result = try runHark(["record", "--help"], rig: rig)
        #expect(result.status == 0)
        let help = String(decoding: result.standardOutput, as: UTF8.self)
        #expect(help.contains("--compression-level") && help.contains("--sample-format"))
    }

    /// Files in the rig's directory other than the rig's own.
    private func leftoverFiles(in rig: ALSATestRig) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: rig.directory.path)
            .filter { !["input.raw", "asoundrc", "run", "config", "state", "etc"].contains($0)
                && !$0.hasPrefix("stdout-") && !$0.hasPrefix("stderr-") }
    }
}
