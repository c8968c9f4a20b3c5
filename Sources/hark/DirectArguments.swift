import ArgumentParser

/// One option as swift-argument-parser declares it, for `DirectArguments`: its spellings and how
/// it takes its value. Each table of these repeats declarations made with `@Option` and `@Flag`;
/// `DirectParseTests` checks every table against what swift-argument-parser itself reports of the
/// command (`--experimental-dump-help`), so a table cannot drift from its declarations unseen.
struct DirectOption: Sendable {
    enum Kind: Sendable, Equatable {
        /// `@Flag`: no value.
        case flag
        /// `@Option` with the default parsing (`.next`): the next argument, if it is a value
        /// (does not start with a dash, or is `-` alone), or a value attached with `=`.
        case value
        /// `@Option(parsing: .unconditional)`: the next argument whatever it is (`-r -1`).
        case unconditionalValue
    }

    /// Every spelling, `-o` and `--output`; the last is the name values are filed under.
    let names: [String]
    let kind: Kind
    /// Whether it may be given more than once (an array of values: `-o`, `--tag`).
    let repeats: Bool

    init(_ names: String..., kind: Kind = .value, repeats: Bool = false) {
        self.names = names
        self.kind = kind
        self.repeats = repeats
    }

    var name: String { names[names.count - 1] }
}

/// Thrown where an argument list is not one `DirectArguments` reads as swift-argument-parser
/// would: the list then goes to swift-argument-parser, which parses it, or says what is wrong.
struct NotDirect: Error {}

/// A command's arguments read without swift-argument-parser's reflection, for the shapes a
/// recording's command line takes nearly always: `--name value`, `--name=value`, `-n value`,
/// flags, each option once (`-o` and `--tag` as often as given).
///
/// Why: swift-argument-parser finds a command's options by reflecting over its properties, and the
/// Swift runtime's first look-ups of their types (metadata from mangled names, conformance scans
/// over the binary's 3,800 records) cost every `hark record` about 15.7 M instructions, half of
/// the 32 M a one-second recording takes in all and 2 ms of CPU (docs/performance.md). Help,
/// errors, completions and every other shape stay swift-argument-parser's: anything this reader is
/// not sure of (a short-option group `-qv`, an attached short value `-d5`, `--`, `--name=` with
/// nothing after it, a value that starts with a dash, an option given twice, a value its type
/// refuses, an unknown word) throws `NotDirect`, and the whole list is parsed by
/// swift-argument-parser from the start.
///
/// Invariant: a list read here gives exactly the values swift-argument-parser would give it
/// (each value is converted by the same `ExpressibleByArgument` initializer); `DirectParseTests`
/// compares the two on random lists.
struct DirectArguments {
    /// The values given, by each option's `DirectOption.name`, in the order given.
    private var values: [String: [String]] = [:]
    /// The flags given, by name.
    private var flags: Set<String> = []

    init(_ arguments: some Collection<String>, options: [DirectOption]) throws(NotDirect) {
        var optionsBySpelling: [String: DirectOption] = [:]
        for option in options { for name in option.names { optionsBySpelling[name] = option } }
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            // An option is `--name`, `--name=value` or `-n`: anything else (a value where an
            // option must stand, `--`, `-qv`, `-d5`, `-d=5`) is swift-argument-parser's to read.
            let spelling: Substring
            var attached: String?
            if argument.hasPrefix("--") {
                let equals = argument.firstIndex(of: "=")
                spelling = argument[..<(equals ?? argument.endIndex)]
                if let equals {
                    // swift-argument-parser reads `--name=` as `--name` alone (and then takes the
                    // next argument as its value): left to it.
                    guard argument.index(after: equals) < argument.endIndex else { throw NotDirect() }
                    attached = String(argument[argument.index(after: equals)...])
                }
            } else if argument.hasPrefix("-"), argument.count == 2 {
                spelling = argument[...]
            } else {
                throw NotDirect()
            }
            guard let option = optionsBySpelling[String(spelling)] else { throw NotDirect() }
            let given = values[option.name] != nil || flags.contains(option.name)
            guard option.repeats || !given else { throw NotDirect() }
            switch option.kind {
            case .flag:
                // `--verify=yes` is an error swift-argument-parser words.
                guard attached == nil else { throw NotDirect() }
                flags.insert(option.name)
            case .value, .unconditionalValue:
                let value: String
                if let attached {
                    value = attached
                } else {
                    guard let next = remaining.popFirst(), Self.isValue(next, for: option.kind) else { throw NotDirect() }
                    value = next
                }
                values[option.name, default: []].append(value)
            }
        }
    }

    /// Whether swift-argument-parser takes `argument`, standing after an option of `kind`, as
    /// that option's value. A value does not start with a dash, or is `-` (stdout) or empty.
    /// After an unconditional option it may also be a negative number (`--start-above -40`):
    /// swift-argument-parser splits `-40` into short options first, which never fails for a
    /// single dash followed by digits and points, then takes the argument whole. Other dashed
    /// words, which it may refuse before it parses (`---x`, `-=x`), are left to it.
    private static func isValue(_ argument: String, for kind: DirectOption.Kind) -> Bool {
        guard argument.hasPrefix("-"), argument != "-" else { return true }
        guard kind == .unconditionalValue else { return false }
        let rest = argument.dropFirst()
        return !rest.isEmpty && rest.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
    }

    /// Whether the flag named `name` was given.
    func flag(_ name: String) -> Bool {
        flags.contains(name)
    }

    /// The value of the option named `name` (nil when it was not given), converted as
    /// swift-argument-parser converts it.
    func value<Value: ExpressibleByArgument>(_ name: String) throws(NotDirect) -> Value? {
        guard let text = values[name]?.first else { return nil }
        guard let value = Value(argument: text) else { throw NotDirect() }
        return value
    }

    /// Every value of a repeatable option, in the order given (empty when it was not given).
    func values<Value: ExpressibleByArgument>(_ name: String) throws(NotDirect) -> [Value] {
        var converted: [Value] = []
        for text in values[name] ?? [] {
            guard let value = Value(argument: text) else { throw NotDirect() }
            converted.append(value)
        }
        return converted
    }

    /// Which of `cases`' flags was given: nil for none, `NotDirect` for more than one (which
    /// swift-argument-parser refuses in its own words).
    func exclusiveFlag<Case>(_ cases: [(name: String, value: Case)]) throws(NotDirect) -> Case? {
        let given = cases.filter { flags.contains($0.name) }
        guard given.count <= 1 else { throw NotDirect() }
        return given.first?.value
    }
}
