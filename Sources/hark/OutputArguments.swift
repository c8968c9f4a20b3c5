/// Which of `hark record`'s arguments belong to which output, when `-o` is given more than once.
///
/// The rule, as in the README: an output's options (`--format`, the FLAC and Opus options,
/// `--max-size`, `--max-file-time`) follow its `-o`; those before the second `-o` are the first
/// output's, wherever they stand, so a command with one output reads as it always has. Everything
/// else (device, duration, tags, …) is the recording's and may stand anywhere.
///
///     hark record -o archive.flac --compression-level 8 -o - --format raw -d 60
///     → main: record -o archive.flac --compression-level 8 -o - -d 60
///       second output: --format raw
///
/// swift-argument-parser has no notion of an option's position, so the arguments of the second
/// and later outputs are taken out here, before it parses the rest, and each output's are parsed
/// on their own as `OutputOptions`. A value that looks like one of these options is taken for
/// the option, as swift-argument-parser itself takes it (a value may not start with a dash
/// unless written `--option=value`).
enum OutputArguments {
    /// The options that belong to an output, and whether each takes a value: `OutputOptions`'
    /// table (`DirectRecordParse`).
    static let optionsTakingValue: [String: Bool] = Dictionary(uniqueKeysWithValues: OutputOptions.directOptions.flatMap { option in
        option.names.map { ($0, option.kind != .flag) }
    })

    struct Split: Equatable {
        /// The arguments for swift-argument-parser: everything but the later outputs' options.
        var main: [String]
        /// The options of the second, third, … output, in order (empty when it has none).
        var laterOutputs: [[String]]
    }

    /// Splits hark's arguments (without the program's name). Anything but `record` is left whole.
    static func split(_ arguments: [String]) -> Split {
        guard arguments.first == "record" else { return Split(main: arguments, laterOutputs: []) }
        var main = [arguments[0]]
        var laterOutputs: [[String]] = []
        var outputsSeen = 0
        var index = 1
        while index < arguments.count {
            let token = arguments[index]
            if token == "--" {
                main += arguments[index...]
                break
            }
            if token == "-o" || token == "--output" {
                outputsSeen += 1
                if outputsSeen >= 2 { laterOutputs.append([]) }
                main += arguments[index..<min(index + 2, arguments.count)]
                index += 2
                continue
            }
            if token.hasPrefix("--output=") || (token.hasPrefix("-o") && !token.hasPrefix("--")) {
                outputsSeen += 1
                if outputsSeen >= 2 { laterOutputs.append([]) }
                main.append(token)
                index += 1
                continue
            }
            let name = token.split(separator: "=", maxSplits: 1).first.map(String.init) ?? token
            if outputsSeen >= 2, token.hasPrefix("--"), let takesValue = optionsTakingValue[name] {
                // `--max-size=` with nothing after the `=` is `--max-size` to swift-argument-parser,
                // which then takes the next argument as its value.
                let hasAttachedValue = token.firstIndex(of: "=").map { token.index(after: $0) < token.endIndex } ?? false
                let end = takesValue && !hasAttachedValue ? min(index + 2, arguments.count) : index + 1
                laterOutputs[outputsSeen - 2] += arguments[index..<end]
                index = end
                continue
            }
            main.append(token)
            index += 1
        }
        return Split(main: main, laterOutputs: laterOutputs)
    }
}
