import ArgumentParser
import Recorder
import Testing
@testable import hark

/// Which of `hark record`'s arguments belong to which output (`OutputArguments`).
@Suite struct OutputArgumentsTests {
    @Test func optionsAfterTheSecondOutputAreItsOwn() {
        let split = OutputArguments.split(["record", "-o", "a.flac", "--compression-level", "8", "-o", "-", "--format", "raw",
                                           "-d", "60", "--output", "c.opus", "--bitrate=64", "--vbr", "--title", "T"])
        #expect(split.main == ["record", "-o", "a.flac", "--compression-level", "8", "-o", "-", "-d", "60",
                               "--output", "c.opus", "--title", "T"])
        #expect(split.laterOutputs == [["--format", "raw"], ["--bitrate=64", "--vbr"]])
    }

    /// `--max-size=` is `--max-size` followed by its value to swift-argument-parser.
    @Test func anOptionWithAnEmptyAttachedValueTakesTheNextArgument() {
        let split = OutputArguments.split(["record", "-o", "a.flac", "-o", "b.flac", "--max-size=", "1G", "--format=", "wav"])
        #expect(split.main == ["record", "-o", "a.flac", "-o", "b.flac"])
        #expect(split.laterOutputs == [["--max-size=", "1G", "--format=", "wav"]])
    }

    @Test func withOneOutputEverythingStaysWhereItIs() {
        let arguments = ["record", "--format", "wav", "--max-size", "1M", "-o", "x.wav", "--max-file-time", "60"]
        #expect(OutputArguments.split(arguments) == .init(main: arguments, laterOutputs: []))
        #expect(OutputArguments.split(["record", "--bitrate", "64"]) == .init(main: ["record", "--bitrate", "64"], laterOutputs: []))
    }

    @Test func anOutputWithoutOptionsHasAnEmptySegment() {
        let split = OutputArguments.split(["record", "-o", "a.flac", "-o", "b.opus", "-o", "-", "--format", "flac"])
        #expect(split.laterOutputs == [[], ["--format", "flac"]])
    }

    @Test func otherCommandsAndTheTerminatorAreLeftWhole() {
        let permissions = ["permissions", "log", "-o", "x", "-o", "y", "--format", "raw"]
        #expect(OutputArguments.split(permissions).main == permissions)
        let split = OutputArguments.split(["record", "-o", "a", "-o", "b", "--", "--format", "raw"])
        #expect(split.main == ["record", "-o", "a", "-o", "b", "--", "--format", "raw"] && split.laterOutputs == [[]])
    }

    /// The splitter's list is the options `OutputOptions` declares, no more and no fewer: an
    /// output option missing from it would silently go to the first output.
    @Test func theSplittersListIsEveryOutputOption() {
        let help = OutputOptions.helpMessage(columns: 400)
        let declared = Set(help.matches(of: /(--[a-z][a-z0-9-]*)/).map { String($0.1) }).subtracting(["--help"])
        #expect(declared == Set(OutputArguments.optionsTakingValue.keys), "\(help)")
        for (name, takesValue) in OutputArguments.optionsTakingValue where name != "--help" {
            let parsedAsFlag = (try? OutputOptions.parse([name])) != nil
            #expect(parsedAsFlag == !takesValue, "\(name)")
        }
    }

    /// The level in lines about an armed recording reads as given: to a tenth, or finer when it
    /// was given finer (-0.01 read "0.0 dBFS").
    @Test func anArmedLevelReadsAsGiven() {
        let cases: [(Double, String)] = [(-40, "-40.0 dBFS"), (-0.01, "-0.01 dBFS"), (-12.25, "-12.25 dBFS"),
                                         (-90, "-90.0 dBFS"), (-3.1416, "-3.142 dBFS"),
                                         (-0.0004, "-0.0004 dBFS")]
        for (level, text) in cases {
            #expect(SoundActivation(startAboveDBFS: level).levelText == text)
        }
    }

    /// Sizes read as `head -c` reads them: k, M, G and KiB… in powers of 1024, kB, MB, GB in
    /// powers of 1000 ("1MB" was taken as 1 MiB).
    @Test func sizesReadAsCoreutilsReadsThem() {
        let cases: [(String, Int?)] = [("1048576", 1_048_576), ("500k", 512_000), ("650M", 681_574_400), ("1.5G", 1_610_612_736),
                                       ("1MiB", 1_048_576), ("64KiB", 65_536), ("1MB", 1_000_000), ("64kB", 64_000),
                                       ("2GB", 2_000_000_000), ("10B", 10), ("10iB", nil), ("MB", nil), ("-1M", nil), ("+1M", nil), ("0", nil)]
        for (text, bytes) in cases {
            #expect(ByteSize(argument: text)?.bytes == bytes, "\(text)")
        }
    }
}
