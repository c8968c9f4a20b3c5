/// What a session's outputs are, for the messages and the access log, and the hooks that tell
/// of their files as they are named.
extension RecordingSession {
    /// Where the recording goes: each output's first file (strftime patterns expanded), or "stdout";
    /// a sound-activated file output's name as given (its files are named as each starts).
    public var outputDescription: String {
        let names = outputs.map { $0.startsOnSound ? $0.configuration.destination.description : $0.destination.description }
        return names.count <= 2 ? names.joined(separator: " and ") : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    /// Each file output's first file (strftime patterns expanded); stdout has none.
    /// A sound-activated output has none until the first sound (`whenFileStarts` tells of it then).
    public var outputFiles: [String] {
        outputs.compactMap { output in
            if case .file(let path) = output.destination, !output.startsOnSound { path } else { nil }
        }
    }

    /// Those of `outputFiles` named only with their first audio, each replacing a file of that
    /// name (until then the path holds that file); `whenFirstFileIsNamed` tells of each.
    public var outputFilesNamedAtFirstAudio: [String] {
        outputs.compactMap { output in
            if case .file(let path) = output.destination, output.namesAtFirstAudio { path } else { nil }
        }
    }

    /// Whether an output is split into files: a regular file's; not stdout's, nor a FIFO's or a
    /// device's, which get their segments back to back.
    public var splitsIntoFiles: Bool { outputs.contains { $0.splitter != nil && $0.writesRegularFiles } }

    /// Frames each output's ring holds.
    public var ringCapacityFrames: Int { outputs[0].lane.ring.capacityFrames }

    /// Has `handler` told the path of each file a split starts (`--max-file-time`, SIGUSR1), and of
    /// a sound-activated recording's every file, on the encoder thread of its output. Call before
    /// `start()`.
    public func whenFileStarts(_ handler: @escaping @Sendable (String) -> Void) {
        for output in outputs { output.splitter?.whenFileStarts = handler }
    }

    /// Has `handler` told the path of each of `outputFilesNamedAtFirstAudio` once it is named, on
    /// the encoder thread of its output. Call before `start()`.
    public func whenFirstFileIsNamed(_ handler: @escaping @Sendable (String) -> Void) {
        for output in outputs { output.splitter?.whenFirstFileIsNamed = handler }
    }

    /// Has `handler` told each segment of a sound-activated recording once it has ended, as the
    /// first output saw it (every output decides alike on the same audio), on that output's
    /// encoder thread. Call before `start()`.
    public func whenSegmentEnds(_ handler: @escaping @Sendable (RecordedSegment) -> Void) {
        outputs[0].soundGate?.whenSegmentEnds = handler
    }
}
