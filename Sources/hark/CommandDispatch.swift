import ArgumentParser

extension Hark {
    /// Parses hark's arguments (without the program's name) into the command they name, as
    /// `parseAsRoot` does, with the same commands, values, errors and exit codes.
    ///
    /// Why not `parseAsRoot` alone: `hark record …` goes straight to `RecordCommand`'s own parser.
    /// Given the whole tree, swift-argument-parser builds the record command's argument set (a
    /// reflection over its 36 options) four times instead of twice (the root's pass asks twice
    /// more whether `record` takes passthrough arguments), makes each subcommand's name from its
    /// type's name, and tries two probe parsers for `--generate-completion-script`: 0.7 ms of the
    /// 2.55 ms of CPU the parse took at the start of every recording.
    ///
    /// What only the whole tree answers goes to the whole tree: help in any spelling, `--version`,
    /// completion scripts and dumped help (see `needsTheWholeTree`). `ArgumentFuzzTests` checks
    /// that both ways give the same outcome (300 random `record` argument lists in the suite,
    /// 10,000 in scripts/fuzz-arguments). Since 2026-12-01 most `record` lists do not reach the
    /// library at all (`RecordCommand.parsedDirectly`, checked against it by `DirectParseTests`).
    static func parseCommand(_ arguments: [String]) throws -> ParsableCommand {
        guard arguments.first == RecordCommand.configuration.commandName,
              !arguments.dropFirst().contains(where: needsTheWholeTree) else {
            return try parseAsRoot(arguments)
        }
        // The shapes a recording's command line nearly always takes are read without the
        // library's reflection (`DirectArguments`); the rest, and every error, are its own.
        if let command = RecordCommand.parsedDirectly(arguments.dropFirst()) { return command }
        // RecordCommand's configuration names "hark" as its super-command, so its errors' usage
        // lines read `hark record` and its parser skips the completion-script probes, which
        // belong to the root.
        return try RecordCommand.parseAsRoot(Array(arguments.dropFirst()))
    }

    /// Whether `argument` may ask for something only the whole command tree answers: `help`,
    /// `--help` and `--help-hidden`, a short-option group holding `h` (`-h`, `-help`, `-vh`),
    /// `--version`, `--generate-completion-script`, `--experimental-dump-help`. Erring towards
    /// yes costs only the time saved.
    static func needsTheWholeTree(_ argument: String) -> Bool {
        if argument == "help" { return true }
        if argument.hasPrefix("--") {
            return ["--help", "--version", "--generate-completion-script", "--experimental"].contains { argument.hasPrefix($0) }
        }
        return argument.hasPrefix("-") && argument.contains("h")
    }
}
