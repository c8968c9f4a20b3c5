import ArgumentParser
import Encoding

/// The codecs `--format` accepts.
enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
    case flac
    case opus
    case wav
    case raw

    /// In any case (`--format WAV`), as `-f s16_le` and the extension `.Wav` are taken.
    init?(argument: String) {
        self.init(rawValue: argument.lowercased())
    }

    /// The codec an output path's extension names: .flac, .opus or .ogg, .wav, .raw or .pcm.
    init?(pathExtensionOf path: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "flac": self = .flac
        case "opus", "ogg": self = .opus
        case "wav": self = .wav
        case "raw", "pcm": self = .raw
        default: return nil
        }
    }

    /// The extension a new file in the recordings library gets.
    var fileExtension: String {
        switch self {
        case .flac: "flac"
        case .opus: "opus"
        case .wav: "wav"
        case .raw: "raw"
        }
    }
}

/// FLAC's options.
struct FLACOptions: ParsableArguments {
    @Option(name: .customLong("compression-level"), parsing: .unconditional, help: ArgumentHelp("FLAC compression level 0–8 (default 5).", valueName: "n"))
    var compressionLevel: Int?

    @Flag(help: "FLAC: decode every frame while encoding and compare with the input.")
    var verify = false

    func validate() throws {
        if let compressionLevel, !FLACSettings.compressionLevels.contains(compressionLevel) {
            throw ValidationError("compression level \(compressionLevel) is outside 0–8")
        }
    }

    /// The first FLAC option given, to reject it for Opus output.
    var firstGiven: String? {
        if compressionLevel != nil { return "--compression-level" }
        return verify ? "--verify" : nil
    }

    func settings(tags: StreamTags) -> FLACSettings {
        FLACSettings(compressionLevel: compressionLevel ?? 5, verify: verify, tags: tags)
    }
}

extension OpusSettings.BitrateMode: EnumerableFlag {
    /// opusenc's spellings: --vbr, --cvbr, --hard-cbr.
    public static func name(for value: Self) -> NameSpecification { .customLong(value.rawValue) }

    public static func help(for value: Self) -> ArgumentHelp? {
        switch value {
        case .vbr: "Opus: variable bitrate (default)."
        case .constrainedVBR: "Opus: constrained variable bitrate."
        case .hardCBR: "Opus: hard constant bitrate."
        }
    }
}

extension OpusSettings.Application: ExpressibleByArgument {}

/// Ogg Opus's options, named after opusenc's.
struct OpusOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("Opus bitrate in kb/s, 6–512 (default as opusenc: 64 mono, 96 stereo, 320 for 5.1, 416 for 7.1).",
                               valueName: "kbps"))
    var bitrate: Double?

    @Flag var bitrateMode: OpusSettings.BitrateMode?

    @Option(parsing: .unconditional, help: ArgumentHelp("Opus encoder complexity 0–10 (default 10).", valueName: "n"))
    var complexity: Int?

    @Option(name: .customLong("frame-size"), parsing: .unconditional, help: ArgumentHelp("Opus frame size in ms: 2.5, 5, 10, 20, 40, 60 (default 20).", valueName: "ms"))
    var frameSize: Double?

    @Option(help: ArgumentHelp("Opus application: audio, voip or lowdelay (default audio).", valueName: "type"))
    var application: OpusSettings.Application?

    @Option(name: .customLong("max-delay"), parsing: .unconditional,
            help: ArgumentHelp("Opus: longest time audio waits before its Ogg page is written, 0–1000 ms (default 200).", valueName: "ms"))
    var maxDelay: Int?

    func validate() throws {
        if let bitrate, !OpusSettings.bitrateRangeKbps.contains(bitrate) {
            throw ValidationError("bitrate \(bitrate) kb/s is outside 6–512")
        }
        if let complexity, !OpusSettings.complexities.contains(complexity) {
            throw ValidationError("complexity \(complexity) is outside 0–10")
        }
        if let frameSize, !OpusSettings.frameDurations.contains(frameSize) {
            throw ValidationError("frame size \(frameSize) ms is not one of 2.5, 5, 10, 20, 40, 60")
        }
        if let maxDelay, !OpusSettings.maxDelayRangeMilliseconds.contains(maxDelay) {
            throw ValidationError("max delay \(maxDelay) ms is outside 0–1000")
        }
    }

    /// The first Opus option given, to reject it for FLAC output.
    var firstGiven: String? {
        if bitrate != nil { return "--bitrate" }
        if let bitrateMode { return "--\(bitrateMode.rawValue)" }
        if complexity != nil { return "--complexity" }
        if frameSize != nil { return "--frame-size" }
        if application != nil { return "--application" }
        return maxDelay != nil ? "--max-delay" : nil
    }

    func settings(tags: StreamTags) -> OpusSettings {
        let defaults = OpusSettings()
        return OpusSettings(
            bitrateKbps: bitrate, bitrateMode: bitrateMode ?? defaults.bitrateMode,
            complexity: complexity ?? defaults.complexity, frameMilliseconds: frameSize ?? defaults.frameMilliseconds,
            application: application ?? defaults.application, maxDelayMilliseconds: maxDelay ?? defaults.maxDelayMilliseconds,
            tags: tags)
    }
}
