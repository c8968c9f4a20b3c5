import ArgumentParser
import RecordPermission
import Recorder
#if canImport(Glibc)
import Glibc
#endif

/// `hark list`: the recordings hark saved in the recordings library, from the access log.
///
/// Add-only access means hark never looks into the library folder to list it: what it saved is
/// what its own log says it saved. A file since moved or deleted is marked as missing.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the recordings saved in your recordings library (from the access log).")

    func run() throws {
        let library = RecordingsLibrary.current()
        let saved = AccessLog().entries().filter { library.contains($0.output) }
        guard !saved.isEmpty else {
            Console.notice("no recordings saved in \(library.directory) yet; 'hark record' without -o saves there")
            return
        }
        var text = ""
        for entry in saved {
            let seconds = Double(entry.frames) / Double(PermissionsCommand.Log.sampleRate(entry.format) ?? 1)
            var info = stat()
            let missing = stat(entry.output, &info) == 0 ? "" : "  (missing)"
            text += "\(entry.start)  \(SecondsText.format(seconds)) s  \(entry.output)\(missing)\n"
        }
        print(text, terminator: "")
    }
}
