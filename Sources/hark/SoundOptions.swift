import ArgumentParser
import Recorder

/// `--start-above`, `--stop-after`, `--split-on-silence` and `--pre-roll`: recording that starts
/// when something is heard and stops, or starts a new file, once it has been quiet for a while.
struct SoundOptions: ParsableArguments {
    @Option(name: .customLong("start-above"), parsing: .unconditional,
            help: ArgumentHelp("Arm instead of recording: the microphone is open (and needs the grant) but nothing is written until the level rises above this many dBFS (the status line's RMS, loudest channel, over 50 ms; e.g. -40). A level that never rises leaves no file.",
                               valueName: "dBFS"))
    var startAbove: Double?

    @Option(name: .customLong("stop-after"), parsing: .unconditional,
            help: ArgumentHelp("With --start-above: end the recording once the level has stayed 3 dB or more below it for this long (e.g. 5, 1.5s, 500ms, 2m).",
                               valueName: "duration"))
    var stopAfter: DurationArgument?

    @Option(name: .customLong("split-on-silence"), parsing: .unconditional,
            help: ArgumentHelp("With --start-above: finish the file after this much silence and start a new one with the next sound (names as --max-file-time: -2, -3, … or the strftime pattern). Standard output gets the sounds back to back.",
                               valueName: "duration"))
    var splitOnSilence: DurationArgument?

    @Option(name: .customLong("pre-roll"), parsing: .unconditional,
            help: ArgumentHelp("With --start-above: keep this much audio from before the sound that started the recording, so its first syllable is whole (default 0.5 s, at most 30 s; the ring grows to hold it).",
                               valueName: "duration"))
    var preRoll: DurationArgument?

    /// Longest pre-roll: 30 s of 8 channels at 192 kHz in 32 bits is 184 MiB of ring.
    static let maximumPreRollSeconds = 30.0

    func validate() throws {
        guard let startAbove else {
            let given = [("--stop-after", stopAfter != nil), ("--split-on-silence", splitOnSilence != nil), ("--pre-roll", preRoll != nil)]
            if let option = given.first(where: \.1)?.0 {
                throw ValidationError("\(option) needs --start-above LEVEL, the level sound must rise above (e.g. --start-above -40)")
            }
            return
        }
        guard startAbove.isFinite, startAbove < 0, startAbove >= -90 else {
            // 0 dBFS is full scale: no level rises above it, so it is not a level to wait for.
            throw ValidationError("--start-above \(startAbove) must be at least -90 and below 0 dBFS (full scale)")
        }
        for (option, duration) in [("--stop-after", stopAfter), ("--split-on-silence", splitOnSilence)] {
            if let duration, duration.seconds < 0.1 || duration.seconds > 86_400 {
                throw ValidationError("\(option) \(duration.text) is outside 0.1 s–24 h")
            }
        }
        if let stopAfter, let splitOnSilence, stopAfter.seconds <= splitOnSilence.seconds {
            throw ValidationError("--stop-after \(stopAfter.text) must be longer than --split-on-silence \(splitOnSilence.text): the file is finished first, the recording ends later")
        }
        if let preRoll, preRoll.seconds > Self.maximumPreRollSeconds {
            throw ValidationError("--pre-roll \(preRoll.text) is over the \(Int(Self.maximumPreRollSeconds)) s maximum")
        }
    }

    var activation: SoundActivation? {
        startAbove.map { level in
            SoundActivation(startAboveDBFS: level, stopAfterSeconds: stopAfter?.seconds,
                            splitOnSilenceSeconds: splitOnSilence?.seconds,
                            preRollSeconds: preRoll?.seconds ?? SoundActivation.defaultPreRollSeconds)
        }
    }
}

/// A duration as people type it: seconds ("5", "1.5"), or with a unit: "500ms", "1.5s", "2m",
/// "2min", "1h".
struct DurationArgument: ExpressibleByArgument, Equatable {
    let seconds: Double
    let text: String

    init?(argument: String) {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("min", 60), ("s", 1), ("m", 60), ("h", 3600)]
        var number = Substring(argument)
        var scale = 1.0
        for unit in units where number.hasSuffix(unit.suffix) {
            number = number.dropLast(unit.suffix.count)
            scale = unit.seconds
            break
        }
        guard !number.hasPrefix("+"), let value = Double(number), value.isFinite, value >= 0 else { return nil }
        seconds = value * scale
        text = argument
    }
}

extension SoundActivation {
    /// "-40.0 dBFS", "-0.25 dBFS": to a tenth, or to the thousandth the level was given to (a
    /// level just under full scale rounded to a tenth read "0.0 dBFS", which no level rises above).
    var levelText: String {
        let thousandths = Int((abs(startAboveDBFS) * 1000).rounded())
        // Finer than a thousandth below full scale: as Swift prints it ("-0.0004").
        if thousandths == 0, startAboveDBFS != 0 { return "\(startAboveDBFS) dBFS" }
        var fraction = String(thousandths % 1000)
        while fraction.count < 3 { fraction = "0" + fraction }
        while fraction.count > 1, fraction.hasSuffix("0") { fraction.removeLast() }
        return (startAboveDBFS < 0 ? "-" : "") + "\(thousandths / 1000).\(fraction) dBFS"
    }

    /// What an armed hark will do, for the line it prints as it starts: "when the level rises
    /// above -40.0 dBFS (with 0.5 s before it), a new file after 2 s of silence, ending after 60 s".
    /// Outputs that cannot be split (stdout, a FIFO) get the sounds back to back instead.
    func plan(splitsIntoFiles: Bool) -> String {
        var text = "when the level rises above \(levelText) (with \(SecondsText.format(preRollSeconds)) s before it)"
        if let split = splitOnSilenceSeconds {
            text += splitsIntoFiles ? ", a new file after \(SecondsText.format(split)) s of silence"
                : ", the sounds back to back (silences of \(SecondsText.format(split)) s or more left out)"
        }
        if let stop = stopAfterSeconds { text += ", ending after \(SecondsText.format(stop)) s of silence" }
        return text
    }
}
