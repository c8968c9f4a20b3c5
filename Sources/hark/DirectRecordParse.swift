import ArgumentParser
import Capture
import Encoding
import Recorder

/// `hark record`'s options read by `DirectArguments`, without swift-argument-parser's reflection
/// (why: `DirectArguments`). Each type's table repeats the names and parsing of its `@Option` and
/// `@Flag` declarations, and its initializer sets every one of them, with the same default: a
/// property left unset would stop hark the first time it is read, so an option added to a type
/// must be added here too. `DirectParseTests` fails when a table differs from what
/// swift-argument-parser reports of the command, and when a parse here differs from its own.
extension RecordCommand {
    /// The command's own options, then its groups'.
    static let directOptions = [
        DirectOption("-o", "--output", repeats: true),
        DirectOption("--format"),
        DirectOption("-d", "--duration", kind: .unconditionalValue),
        DirectOption("--ring-seconds", kind: .unconditionalValue),
        DirectOption("-v", "--verbose", kind: .flag),
        DirectOption("-q", "--quiet", kind: .flag),
    ] + CaptureOptions.directOptions + FLACOptions.directOptions + OpusOptions.directOptions
        + TagOptions.directOptions + LimitOptions.directOptions + SoundOptions.directOptions

    /// The command parsed from `arguments` (those after `record`), or nil where
    /// swift-argument-parser must parse them: `NotDirect`, or a validation that failed, whose
    /// message is swift-argument-parser's to give.
    static func parsedDirectly(_ arguments: some Collection<String>) -> RecordCommand? {
        do {
            let given = try DirectArguments(arguments, options: directOptions)
            var command = RecordCommand()
            command.output = try given.values("--output")
            command.format = try given.value("--format")
            command.durationArgument = try given.value("--duration")
            command.ringSeconds = try given.value("--ring-seconds") ?? RecordingConfiguration.defaultRingSeconds
            command.verbose = given.flag("--verbose")
            command.quiet = given.flag("--quiet")
            // Each group is validated as swift-argument-parser validates an option group (when it
            // is decoded, in the order declared), then the command.
            command.capture = try CaptureOptions(given)
            try command.capture.validate()
            command.flac = try FLACOptions(given)
            try command.flac.validate()
            command.opus = try OpusOptions(given)
            try command.opus.validate()
            command.tags = try TagOptions(given)
            try command.tags.validate()
            command.limits = try LimitOptions(given)
            try command.limits.validate()
            command.sound = try SoundOptions(given)
            try command.sound.validate()
            try command.validate()
            return command
        } catch {
            return nil
        }
    }
}

extension OutputOptions {
    static let directOptions = [DirectOption("--format")] + FLACOptions.directOptions + OpusOptions.directOptions + LimitOptions.directOptions

    /// A later output's options (`OutputArguments`), or nil where swift-argument-parser must
    /// parse them (as `RecordCommand.parsedDirectly`).
    static func parsedDirectly(_ arguments: some Collection<String>) -> OutputOptions? {
        do {
            let given = try DirectArguments(arguments, options: directOptions)
            var parsed = OutputOptions()
            parsed.format = try given.value("--format")
            parsed.flac = try FLACOptions(given)
            try parsed.flac.validate()
            parsed.opus = try OpusOptions(given)
            try parsed.opus.validate()
            parsed.limits = try LimitOptions(given)
            try parsed.limits.validate()
            return parsed
        } catch {
            return nil
        }
    }
}

extension CaptureOptions {
    static let directOptions = [
        DirectOption("-D", "--device"),
        DirectOption("-r", "--rate", kind: .unconditionalValue),
        DirectOption("-c", "--channels", kind: .unconditionalValue),
        DirectOption("-f", "--sample-format"),
        DirectOption("--speech", kind: .flag),
        DirectOption("--channel-map"),
        DirectOption("-F", "--period-time", kind: .unconditionalValue),
        DirectOption("-B", "--buffer-time", kind: .unconditionalValue),
        DirectOption("--pad-overruns", kind: .flag),
    ]

    init(_ given: DirectArguments) throws(NotDirect) {
        self.init()
        device = try given.value("--device") ?? Self.defaultDevice
        rateOption = try given.value("--rate")
        channelsOption = try given.value("--channels")
        sampleFormatOption = try given.value("--sample-format")
        speech = given.flag("--speech")
        channelMap = try given.value("--channel-map")
        periodTime = try given.value("--period-time") ?? CaptureRequest.defaultPeriodMicroseconds
        bufferTime = try given.value("--buffer-time") ?? CaptureRequest.defaultBufferMicroseconds
        padOverruns = given.flag("--pad-overruns")
    }
}

extension FLACOptions {
    static let directOptions = [
        DirectOption("--compression-level", kind: .unconditionalValue),
        DirectOption("--verify", kind: .flag),
    ]

    init(_ given: DirectArguments) throws(NotDirect) {
        self.init()
        compressionLevel = try given.value("--compression-level")
        verify = given.flag("--verify")
    }
}

extension OpusOptions {
    /// `--vbr`, `--cvbr`, `--hard-cbr`: the names `OpusSettings.BitrateMode.name(for:)` gives.
    static let bitrateModeFlags = OpusSettings.BitrateMode.allCases.map { (name: "--\($0.rawValue)", value: $0) }

    static let directOptions = [
        DirectOption("--bitrate", kind: .unconditionalValue),
        DirectOption("--complexity", kind: .unconditionalValue),
        DirectOption("--frame-size", kind: .unconditionalValue),
        DirectOption("--application"),
        DirectOption("--max-delay", kind: .unconditionalValue),
    ] + bitrateModeFlags.map { DirectOption($0.name, kind: .flag) }

    init(_ given: DirectArguments) throws(NotDirect) {
        self.init()
        bitrate = try given.value("--bitrate")
        bitrateMode = try given.exclusiveFlag(Self.bitrateModeFlags)
        complexity = try given.value("--complexity")
        frameSize = try given.value("--frame-size")
        application = try given.value("--application")
        maxDelay = try given.value("--max-delay")
    }
}

extension TagOptions {
    static let directOptions = [
        DirectOption("--title"),
        DirectOption("--artist"),
        DirectOption("--album"),
        DirectOption("--comment"),
        DirectOption("--tag", repeats: true),
        DirectOption("--no-loudness", kind: .flag),
        DirectOption("--no-auto-tags", kind: .flag),
    ]

    init(_ given: DirectArguments) throws(NotDirect) {
        self.init()
        title = try given.value("--title")
        artist = try given.value("--artist")
        album = try given.value("--album")
        comment = try given.value("--comment")
        tags = try given.values("--tag")
        noLoudness = given.flag("--no-loudness")
        leavesOutDateAndCapture = given.flag("--no-auto-tags")
    }
}

extension LimitOptions {
    static let directOptions = [
        DirectOption("--max-size", kind: .unconditionalValue),
        DirectOption("--max-file-time", kind: .unconditionalValue),
    ]

    init(_ given: DirectArguments) throws(NotDirect) {
        self.init()
        maxSize = try given.value("--max-size")
        maxFileDuration = try given.value("--max-file-time")
    }
}

extension SoundOptions {
    static let directOptions = [
        DirectOption("--start-above", kind: .unconditionalValue),
        DirectOption("--stop-after", kind: .unconditionalValue),
        DirectOption("--split-on-silence", kind: .unconditionalValue),
        DirectOption("--pre-roll", kind: .unconditionalValue),
    ]

    init(_ given: DirectArguments) throws(NotDirect) {
        self.init()
        startAbove = try given.value("--start-above")
        stopAfter = try given.value("--stop-after")
        splitOnSilence = try given.value("--split-on-silence")
        preRoll = try given.value("--pre-roll")
    }
}
