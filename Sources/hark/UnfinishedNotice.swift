import RecordPermission

/// Recordings the access log says started and never ended, as `hark record` mentions them (once
/// each) and `hark repair --unfinished` lists and repairs them.
enum UnfinishedNotice {
    /// Says once, for each recording left unfinished since the last notice, that it was, and how
    /// to repair it; then logs that it was said.
    static func announce(except ownID: String) {
        let log = AccessLog()
        for (start, noticed) in log.unfinishedRecordings() where !noticed && start.id != ownID {
            // Files deleted or moved since leave nothing to repair at their paths; the notice names
            // those still there, and says nothing when none is (`hark repair --unfinished` still
            // lists the recording, with each file "no longer there", and --write closes it), nor
            // of a recording to stdout alone, which left no file to repair.
            let present = start.outputs.filter { somethingExists(at: $0) }
            if present.isEmpty { continue }
            Console.notice("an earlier recording was left unfinished: \(present.joined(separator: ", ")) "
                + "(started \(start.start.localText)); "
                + "'hark repair --unfinished --write' repairs it")
            try? log.appendEvent(.noticed, recordingID: start.id)
        }
    }
}
