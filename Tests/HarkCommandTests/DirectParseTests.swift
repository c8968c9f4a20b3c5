import ArgumentParser
import Foundation
import SignalGenerator
import Testing
@testable import hark

/// `hark record`'s arguments read without swift-argument-parser (`DirectArguments`,
/// `RecordCommand.parsedDirectly`): the tables say what the declarations say, a list read directly
/// gives the command swift-argument-parser gives, and every other list is left to it.
@Suite struct DirectParseTests {
    // MARK: The tables are the declarations

    /// What swift-argument-parser reports of `record`'s options (`--experimental-dump-help`):
    /// each option's spellings (`-o`, `--output`), kind and parsing, as the tables must repeat them.
    static func declaredOptions() throws -> [String: (kind: String, strategy: String, repeats: Bool)] {
        var dump = ""
        do {
            _ = try RecordCommand.parseAsRoot(["--experimental-dump-help"])
            Issue.record("--experimental-dump-help parsed as a command")
        } catch {
            dump = RecordCommand.fullMessage(for: error)
        }
        let json = try #require(try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any])
        let command = try #require(json["command"] as? [String: Any])
        let arguments = try #require(command["arguments"] as? [[String: Any]])
        var declared: [String: (kind: String, strategy: String, repeats: Bool)] = [:]
        for argument in arguments {
            let names = (argument["names"] as? [[String: Any]] ?? []).map { name in
                (name["kind"] as? String == "short" ? "-" : "--") + (name["name"] as? String ?? "?")
            }
            // Help is the whole tree's (Hark.needsTheWholeTree), never read directly.
            if names.contains("--help") { continue }
            let entry = (kind: argument["kind"] as? String ?? "?", strategy: argument["parsingStrategy"] as? String ?? "?",
                         repeats: argument["isRepeating"] as? Bool ?? false)
            for name in names { declared[name] = entry }
        }
        return declared
    }

    @Test func everyDeclaredOptionIsInTheTablesAsDeclared() throws {
        let declared = try Self.declaredOptions()
        var tabled: Set<String> = []
        for option in RecordCommand.directOptions {
            for name in option.names {
                tabled.insert(name)
                let entry = try #require(declared[name], "\(name) is in the table but swift-argument-parser has no such option")
                switch option.kind {
                case .flag: #expect(entry.kind == "flag", "\(name): \(entry)")
                case .value: #expect(entry.kind == "option" && entry.strategy == "default", "\(name): \(entry)")
                case .unconditionalValue: #expect(entry.kind == "option" && entry.strategy == "unconditional", "\(name): \(entry)")
                }
                #expect(option.repeats == (entry.repeats && entry.kind == "option"), "\(name): \(entry)")
            }
        }
        #expect(Set(declared.keys) == tabled, "declared but not in the tables: \(Set(declared.keys).subtracting(tabled).sorted())")
        // Each of the command's own options is read.
        #expect(RecordCommand.parsedDirectly(["-o", "x.flac", "--format", "wav", "-d", "2", "--ring-seconds", "3", "-v"]) != nil)
    }

    // MARK: The same command as swift-argument-parser's

    /// The command a parse gave, every value of it, as text (`dump`), or the error.
    static func outcome(_ parse: () throws -> Any) -> String {
        do {
            var text = ""
            dump(try parse(), to: &text)
            // An option group's title is set by its declaration when the command is made with
            // init() (the direct path) and left empty when swift-argument-parser decodes it;
            // the title is help text, not a value.
            return text.replacing(/\n *- title: "[^"\n]*"/, with: "")
        } catch {
            return "exit \(Hark.exitCode(for: error).rawValue): \(Hark.message(for: error))"
        }
    }

    static func expectSameAsTheLibrary(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        guard let direct = RecordCommand.parsedDirectly(arguments) else { return }
        #expect(outcome { direct } == outcome { try RecordCommand.parseAsRoot(arguments) }, "\(arguments)", sourceLocation: sourceLocation)
    }

    /// The command lines of the README and docs/usage.md, and the shapes they take: each is read
    /// directly, to the command swift-argument-parser makes of it.
    @Test func everydayCommandLinesAreReadDirectlyAsTheLibraryReadsThem() {
        let lines: [[String]] = [
            ["-o", "talk.flac"], ["-d", "10", "-o", "talk.flac"], ["-o", "talk.opus", "--bitrate", "64", "--application", "voip"],
            ["-f", "S24_LE", "-o", "take.wav"], ["-D", "Blue Yeti", "-o", "talk.flac"], ["-D", "pulse", "-c", "1", "--channel-map", "FR", "-o", "right.flac"],
            ["-D", "plughw:1,0", "-c", "1", "-o", "voice.flac"], [], ["--max-file-time", "3600", "-o", "meeting-%Y%m%d-%H%M.flac"],
            ["--max-size", "650M", "-o", "long.flac"], ["-v", "-d", "60", "-o", "sync.flac"],
            ["--start-above", "-40", "--stop-after", "5", "-o", "note.flac"], ["--start-above=-45.5", "--split-on-silence", "3", "-o", "room-%H%M%S.flac"],
            ["-q", "-D", "pulse", "-d", "1", "--no-loudness", "-o", "p.raw"], ["--tag", "TITLE=Standup", "--tag", "ARTIST=Ana", "--title=x", "-o", "t.flac"],
            ["-o", "a.flac", "-o", "b.opus"], ["--hard-cbr", "--frame-size", "2.5", "--max-delay", "0", "-o", "x.opus"],
            ["-r", "44100", "-F", "10000", "-B", "200000", "--pad-overruns", "--ring-seconds", "0.5", "--compression-level", "8", "--verify", "-o", "x.flac"],
            ["--speech", "-o", "x.raw", "--no-auto-tags", "--pre-roll", "250ms", "--start-above", "-50"],
        ]
        for line in lines {
            #expect(RecordCommand.parsedDirectly(line) != nil, "\(line) was left to swift-argument-parser")
            Self.expectSameAsTheLibrary(line)
        }
    }

    /// What the direct reader is not sure of goes to swift-argument-parser, which reads it (or says
    /// what is wrong) in its own words.
    @Test func shapesItDoesNotReadAreLeftToTheLibrary() {
        let lines: [[String]] = [
            ["-qv"], ["-d5", "-o", "x.flac"], ["-d=5"], ["--", "-o", "x"], ["x.flac"], ["-o"], ["-o", "--quiet"],
            ["--title", "-x", "-o", "x.flac"], ["-d", "1", "-d", "2"], ["--quiet", "--quiet"], ["--verify=yes"],
            ["--vbr", "--cvbr"], ["-r", "fast"], ["-d", "0"], ["-v", "-q"], ["--compression-level", "9"], ["-d", "---x"],
            ["--rate", "-=x"], ["--title=", "x"], ["--output=", "x.flac"], ["--verify="], ["--no-such-option"], ["--format", "mp3"], ["-c", "9"], ["--bitrate", "5"],
        ]
        for line in lines {
            #expect(RecordCommand.parsedDirectly(line) == nil, "\(line) was read directly")
        }
        // A later output's options too.
        #expect(OutputOptions.parsedDirectly(["--format", "raw", "--bitrate", "64"]) != nil)
        #expect(OutputOptions.parsedDirectly(["--title", "x"]) == nil)  // a tag is the recording's, not an output's
        #expect(OutputOptions.parsedDirectly(["--bitrate", "1000"]) == nil)
    }

    /// Random lists of `record`'s options with valid, borderline and wrong values: every list read
    /// directly gives the command swift-argument-parser gives it, and a good share are read directly.
    @Test func randomListsReadDirectlyGiveTheLibrarysCommand() {
        let iterations = ProcessInfo.processInfo.environment["HARK_DIRECT_PARSE_ITERATIONS"].flatMap(Int.init)
            ?? 1_000 / ArgumentFuzzTests.sanitizerDivisor
        var random = SplitMix64(seed: 0x4449_5245)
        let values = ["x.flac", "y.opus", "z.wav", "w.raw", "", "-", "flac", "opus", "WAV", "raw", "mp3", "1", "0", "-1", "-40", "-0.5",
                      "2.5", "48000", "16000", "8", "11", "60", "1e3", "nan", "250ms", "10m", "1.5h", "64k", "1MB", "650M", "S16_LE",
                      "s24_le", "FLOAT_LE", "FL,FR", "FR", "voip", "audio", "TITLE=x", "=x", "K=", "default", "pulse", "Blue Yeti",
                      "-x", "--quiet", "é", "\u{0}"]
        let table = RecordCommand.directOptions
        var readDirectly = 0
        for _ in 0..<iterations {
            var arguments: [String] = []
            for _ in 0..<random.next(below: 6) {
                let option = table[random.next(below: table.count)]
                let name = option.names[random.next(below: option.names.count)]
                let value = values[random.next(below: values.count)]
                switch option.kind {
                case .flag: arguments.append(name)
                case .value, .unconditionalValue:
                    if random.next(below: 4) == 0, name.hasPrefix("--") { arguments.append("\(name)=\(value)") } else { arguments += [name, value] }
                }
            }
            if RecordCommand.parsedDirectly(arguments) != nil { readDirectly += 1 }
            Self.expectSameAsTheLibrary(arguments)
        }
        #expect(readDirectly > iterations / 5, "\(readDirectly) of \(iterations) read directly")
    }

    /// The options of a later output (`-o a.flac -o b.opus --bitrate 64`), the same way.
    @Test func laterOutputsOptionsReadDirectlyGiveTheLibrarysOptions() {
        var random = SplitMix64(seed: 0x4f55_5450)
        let table = OutputOptions.directOptions
        let values = ["flac", "opus", "raw", "x", "5", "64", "-3", "2.5", "7", "voip", "1M", "30m", "0", "-", ""]
        var readDirectly = 0
        let iterations = ProcessInfo.processInfo.environment["HARK_DIRECT_PARSE_ITERATIONS"].flatMap(Int.init)
            ?? 400 / ArgumentFuzzTests.sanitizerDivisor
        for _ in 0..<iterations {
            var arguments: [String] = []
            for _ in 0..<random.next(below: 4) {
                let option = table[random.next(below: table.count)]
                let value = values[random.next(below: values.count)]
                switch option.kind {
                case .flag: arguments.append(option.name)
                case .value, .unconditionalValue:
                    if random.next(below: 4) == 0 { arguments.append("\(option.name)=\(value)") } else { arguments += [option.name, value] }
                }
            }
            guard let direct = OutputOptions.parsedDirectly(arguments) else { continue }
            readDirectly += 1
            #expect(Self.outcome { direct } == Self.outcome { try OutputOptions.parse(arguments) }, "\(arguments)")
        }
        // A share, not a count: a sanitized run compares a fifth of the lists (a fixed 20 failed
        // there, with 14 of 40 read directly).
        #expect(readDirectly > iterations / 5, "\(readDirectly) of \(iterations) read directly")
    }
}
