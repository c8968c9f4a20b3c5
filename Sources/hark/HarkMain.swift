import ArgumentParser
import Recorder
#if canImport(Glibc)
import Glibc
#endif

/// hark's entry point. Parses the command line and turns every error into one line on stderr and
/// a documented exit code; only `--help` and `--version` write to stdout (stdout may carry audio).
@main
enum HarkMain {
    static func main() {
        // First of all, so a Ctrl-C at any moment of a recording's start finalizes a file rather
        // than killing the process; commands that do not record take their default back below.
        StopSignals.block()
        ProcessStart.reserveStandardDescriptors()
        if let argument = ProcessStart.argumentThatIsNotUTF8() {
            Console.errorAlreadyShown("the argument '\(argument)' is not valid UTF-8; hark takes names and text in UTF-8 only")
            exit(ExitStatus.usage)
        }
        do {
            // Several -o: each later output's options are parsed on their own (see OutputArguments).
            let arguments = OutputArguments.split(Array(CommandLine.arguments.dropFirst()))
            var command = try Hark.parseCommand(arguments.main)
            if let record = command as? RecordCommand {
                try record.run(laterOutputs: try laterOutputOptions(arguments.laterOutputs))
            } else if let repair = command as? RepairCommand, repair.write {
                // Signals stay blocked while files are rewritten: a Ctrl-C is taken between
                // copies, and the temporary file removed, rather than left behind.
                try repair.run()
            } else {
                StopSignals.unblock()
                try command.run()
            }
        } catch let code as ExitCode {
            // A command that printed its own lines and only sets the status (hark repair).
            exit(code.rawValue)
        } catch let failure as CommandFailure {
            Console.error(failure.message)
            exit(failure.exitCode)
        } catch {
            let code = Hark.exitCode(for: error)
            if code == .success { Hark.exit(withError: error) }
            let message = Hark.usageErrorLine(Hark.message(for: error), orElse: error)
            Console.error("\(message) (see '\(Hark.helpCommand(for: Array(CommandLine.arguments.dropFirst())))')")
            exit(ExitStatus.usage)
        }
    }
}

extension Hark {
    /// The parser's message as one line: without the list of values it may add on lines of their
    /// own ("…one of the following:" then "  - value" lines). Not cut at any other newline: one
    /// there is the user's (`--tag $'A\nB=x'`), and cutting at it lost the rest of the message;
    /// Console shows it escaped.
    static func usageErrorLine(_ message: String, orElse error: Error) -> String {
        var line = message
        if let valueList = line.firstRange(of: "\n  - ") { line = String(line[..<valueList.lowerBound]) }
        // The parser's refusal of a completion shell is three lines of its own (after the user's
        // quoted shell name, whose own newlines stay escaped).
        line.replace("'.\nPlease use --generate-completion-script=<shell> with one of:\n    ",
                     with: "'; use --generate-completion-script=<shell> with one of: ")
        while line.last == "\n" { line.removeLast() }
        return line.isEmpty ? "\(error)" : line
    }

    /// The help that explains a usage error in `arguments`: the deepest subcommand they name
    /// (`hark record --help`, `hark permissions log --help`), as `hark --help` lists no options.
    static func helpCommand(for arguments: [String]) -> String {
        var words = ["hark"]
        var command: ParsableCommand.Type = Hark.self
        for argument in arguments {
            guard let sub = command.configuration.subcommands.first(where: { $0._commandName == argument }) else { break }
            words.append(argument)
            command = sub
        }
        return (words + ["--help"]).joined(separator: " ")
    }
}

/// Each later output's options, parsed; an error names the output it is in.
private func laterOutputOptions(_ segments: [[String]]) throws -> [OutputOptions] {
    try segments.enumerated().map { index, segment in
        if let options = OutputOptions.parsedDirectly(segment) { return options }
        do {
            return try OutputOptions.parse(segment)
        } catch {
            let message = Hark.usageErrorLine(OutputOptions.message(for: error), orElse: error)
            throw ValidationError("output \(index + 2): \(message)")
        }
    }
}

struct Hark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hark",
        abstract: "Record audio from a sound server or ALSA to FLAC, Ogg Opus, WAV or raw PCM, on a real-time capture thread.",
        discussion: """
            hark asks before it listens: the first recording prompts on the terminal for microphone \
            access (Allow, Allow Once, Don't Allow), and the first one saved to your recordings library \
            (no -o) for adding files there; 'hark permissions' shows and changes the answers.

            Exit codes: 0 normal stop (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT, end of -d, --max-size reached, \
            --stop-after's silence); 64 invalid usage; 69 capture device missing, unavailable or refusing \
            the parameters; 70 encoder set-up failed; 71 system error; 73 output (or the recordings library \
            folder) cannot be created; 74 I/O error while recording or writing the header (disk full, \
            reader gone, device lost; with several -o, one output failed while the others went on), with \
            the file finalized as far as possible; 77 microphone, system-audio or recordings-library access \
            denied, restricted (by the administrator or the desktop's microphone switch), not yet decided \
            with no terminal to ask on, or access revoked while recording.
            """,
        version: HarkVersion.string,
        subcommands: [RecordCommand.self, ListCommand.self, RepairCommand.self, DevicesCommand.self, PermissionsCommand.self]
    )
}

enum HarkVersion {
    static let string = "0.1.0"
}

/// The exit codes hark documents (sysexits.h).
enum ExitStatus {
    static let usage: Int32 = 64
    static let unavailable: Int32 = 69
    static let cannotCreate: Int32 = 73
    static let ioError: Int32 = 74
    static let noPermission: Int32 = 77
}

/// An error that ends the command with one line and a specific exit code.
struct CommandFailure: Error {
    let message: String
    let exitCode: Int32
}

/// Lines for the user on stderr. Written to file descriptor 2 directly: Swift 6 rejects glibc's
/// `stderr` global, and stdout must stay clean for audio.
///
/// Each message is written as `shownOnTerminal`: messages quote file names (a glob in a shared
/// folder, the access log's), device descriptions (a Bluetooth device names itself) and the
/// user's arguments, and a control character in one broke the line in two or rewrote the
/// terminal (an escape sequence in a file's name, printed by `hark repair *.flac`).
enum Console {
    static func error(_ message: String) { write("hark: \(message.shownOnTerminal)\n") }
    static func notice(_ message: String) { write("hark: \(message.shownOnTerminal)\n") }
    /// A message whose quoted text is escaped already (bytes that are not UTF-8, as `\xNN`).
    static func errorAlreadyShown(_ message: String) { write("hark: \(message)\n") }
    /// Text as it is, for the status line's carriage returns.
    static func raw(_ text: String) { write(text) }

    private static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
