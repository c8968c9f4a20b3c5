import ArgumentParser
import RecordPermission
import Recorder
#if canImport(Glibc)
import Glibc
#endif

/// `hark list`: the recordings hark saved in the recordings library, from the access log.
///
/// Add-only access means hark never looks into the library folder to list it: what it saved is
/// what its own log says it saved. A file since moved or deleted is marked as missing. An entry
/// counts when it says it was saved to the library (wherever the library was then), or when its
/// file is in today's library folder (a `-o` there, and lines older than the entry's flag).
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the recordings saved in your recordings library (from the access log).")

    func run() throws {
        let library = RecordingsLibrary.current()
        let log = AccessLog()
        let entries = log.entries()
        // A sound-activated recording logs each segment (its files, from when, how long) and, when
        // it stops, an entry over the whole time the microphone was open that names the same files
        // again: its segments are listed, not that entry.
        let segmented = Set(entries.compactMap { $0.segment != nil ? $0.recordingID : nil })
        let saved = entries.filter { entry in
            (entry.savedToLibrary || library.contains(entry.output)) && (entry.segment != nil || entry.recordingID.map { !segmented.contains($0) } ?? true)
        }
        let untrusted = log.untrustedParts()
        // The log keeps about two of its files' worth (2 MiB): once it has rotated, "yet" is not known.
        let oldestKnown = log.hasRotated ? entries.first?.start : nil
        defer {
            if let oldestKnown, untrusted.isEmpty {
                Console.notice("the access log keeps only its latest entries: recordings saved before \(oldestKnown.localText) are not listed")
            }
        }
        guard !saved.isEmpty else {
            try failIfUntrusted(untrusted)
            if oldestKnown == nil {
                Console.notice("no recordings saved in \(library.directory) yet; 'hark record' without -o saves there")
            }
            return
        }
        var text = ""
        for entry in saved {
            let seconds = Double(entry.frames) / Double(PermissionsCommand.Log.sampleRate(entry.format) ?? 1)
            let heading = "\(entry.start.localText)  \(SecondsText.format(seconds)) s  "
            // A split recording logs its files joined with ", " (library names hold no commas):
            // one line each, the later ones under the first.
            for (index, file) in entry.output.split(separator: ", ").map(String.init).enumerated() {
                var info = stat()
                let missing = stat(file, &info) == 0 ? "" : "  (missing)"
                let lead = index == 0 ? heading : String(repeating: " ", count: heading.count)
                text += "\(lead)\(file.shownOnTerminal)\(missing)\n"
            }
        }
        print(text, terminator: "")
        try failIfUntrusted(untrusted)
    }
}

/// Ends a command that read the access log with exit 77 when a part of it was not read (not
/// trusted to be hark's own writing), after what could be read was shown: "nothing saved" or an
/// empty list would be a false answer.
func failIfUntrusted(_ problems: [String]) throws {
    guard let last = problems.last else { return }
    problems.dropLast().forEach(Console.error)
    throw CommandFailure(message: last, exitCode: ExitStatus.noPermission)
}
