import ArgumentParser
import Encoding
import Recorder

/// The options of an output after the first, when `-o` is given more than once: its codec, the
/// codec's settings and its limits, the same options the first output takes (see `OutputArguments`
/// for which arguments belong to which output).
struct OutputOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Codec of this output.", valueName: "codec"))
    var format: OutputFormat?

    @OptionGroup var flac: FLACOptions
    @OptionGroup var opus: OpusOptions
    @OptionGroup var limits: LimitOptions
}

/// One output as the user asked for it: the path after its `-o` (nil: a new file in the
/// recordings library) and the options that go with it.
struct OutputRequest {
    var path: String?
    var format: OutputFormat?
    var flac: FLACOptions
    var opus: OpusOptions
    var limits: LimitOptions

    /// `-o -`, or a name of standard output (`/dev/stdout`: `OutputPath.namesStandardOutput`).
    var isStandardOutput: Bool { path.map(Self.namesStandardOutput) ?? false }

    static func namesStandardOutput(_ path: String) -> Bool {
        path == "-" || OutputPath.namesStandardOutput(path)
    }

    /// "'talk.flac'" or "stdout", for messages.
    var name: String { path.map { $0 == "-" ? "stdout" : "'\($0)'" } ?? "the recordings library" }

    /// The codec: `--format`, else the path's extension; FLAC on stdout and in the library (raw
    /// on stdout with `--speech`, which speech tools read).
    func resolvedFormat(speech: Bool) throws -> OutputFormat {
        if let format { return format }
        if isStandardOutput && speech { return .raw }
        guard let path, !isStandardOutput else { return .flac }
        guard let format = OutputFormat(pathExtensionOf: path) else {
            throw ValidationError("cannot tell the codec from '\(path)'; name it .flac, .opus, .ogg, .wav, .raw or .pcm, or add --format")
        }
        return format
    }

    /// Rejects options this output's codec does not use, and limits it cannot have. `isOnlyOutput`
    /// words the messages for a recording with one output ("this recording is FLAC").
    func validate(speech: Bool, isOnlyOutput: Bool) throws {
        guard path?.isEmpty != true else { throw ValidationError("the output path is empty; use -o - for stdout") }
        try limits.validate(outputIsStandardOutput: isStandardOutput)
        let outputFormat = try resolvedFormat(speech: speech)
        let subject = isOnlyOutput ? "this recording" : name
        let codec: String
        switch outputFormat {
        case .flac: codec = "FLAC"
        case .opus: codec = "Opus"
        case .wav: codec = "WAV"
        case .raw: codec = "raw"
        }
        if outputFormat != .opus, let option = opus.firstGiven {
            throw ValidationError("\(option) applies to Opus output; \(subject) is \(codec)")
        }
        if outputFormat != .flac, let option = flac.firstGiven {
            throw ValidationError("\(option) applies to FLAC output; \(subject) is \(codec)")
        }
    }

    /// The ENCODER tag: "hark 0.1.0 (libFLAC 1.4.2)" or "hark 0.1.0 (libopus 1.3.1, libopusenc 0.2.1)".
    static func encoderName(_ codec: OutputFormat) -> String {
        switch codec {
        case .flac: "hark \(HarkVersion.string) (libFLAC \(FLACEncoder.libraryVersion))"
        case .opus: "hark \(HarkVersion.string) (\(OggOpusEncoder.libraryVersion))"
        case .wav, .raw: "hark \(HarkVersion.string)"
        }
    }

    /// The output's configuration, with the recording's tags (raw output has none).
    func configuration(destination: OutputDestination, speech: Bool, tags: StreamTags) throws -> OutputConfiguration {
        let outputFormat = try resolvedFormat(speech: speech)
        let codec: CodecSettings = switch outputFormat {
        case .flac: .flac(flac.settings(tags: tags))
        case .opus: .opus(opus.settings(tags: tags))
        case .wav: .wav(tags: tags)
        case .raw: .raw
        }
        return OutputConfiguration(destination: destination, codec: codec, maxFileSeconds: limits.maxFileTime,
                                   maxBytes: limits.maxSize?.bytes, encoderName: Self.encoderName(outputFormat))
    }
}
