import ArgumentParser
import Encoding

/// `hark record`'s tags (Vorbis comments, for both codecs): `--tag KEY=VALUE`, the shorthands
/// `--title`, `--artist`, `--album`, `--comment`, and `--no-auto-tags`.
///
/// The tags go into the file in that order: shorthands first, then each `--tag` as given, then the
/// ones hark adds (DATE, ENCODER, HARK_CAPTURE; see `AutomaticTags` in Recorder) unless the user
/// set that key. A repeated key is another value of the same field, as Vorbis comments allow.
struct TagOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Set the TITLE tag.", valueName: "text"))
    var title: String?

    @Option(help: ArgumentHelp("Set the ARTIST tag.", valueName: "text"))
    var artist: String?

    @Option(help: ArgumentHelp("Set the ALBUM tag.", valueName: "text"))
    var album: String?

    @Option(help: ArgumentHelp("Set the COMMENT tag.", valueName: "text"))
    var comment: String?

    @Option(name: .customLong("tag"),
            help: ArgumentHelp("""
                Add a tag (Vorbis comment), e.g. --tag TITLE=Standup; repeatable. KEY: ASCII 0x20–0x7D \
                without '=', stored upper-case; VALUE: any text, empty allowed. A key you set replaces \
                hark's own DATE, ENCODER or HARK_CAPTURE.
                """, valueName: "key=value"))
    var tags: [String] = []

    @Flag(name: .customLong("no-loudness"),
          help: "Do not measure the loudness (EBU R128): no LUFS in the summary and the log, no ReplayGain/R128 gain tags; saves about 0.12 ms of CPU per second of 48 kHz stereo audio (0.23 ms on a processor without AVX2 and FMA).")
    var noLoudness = false

    @Flag(name: .customLong("no-auto-tags"),
          help: "Leave out what says when and on what the recording was made: the DATE, HARK_CAPTURE and HARK_SOURCE tags (start time; device, source and capture parameters) and the first sample's time and clock drift (HARK_FIRST_SAMPLE_TIME, HARK_FIRST_SAMPLE, HARK_CLOCK_DRIFT_PPM; WAV: bext's date and time). ENCODER and the loudness stay.")
    var leavesOutDateAndCapture = false

    func validate() throws {
        _ = try parsed()
    }

    /// The first tag option given, to refuse it for raw output, which has nowhere to put tags.
    var firstGiven: String? {
        for (name, value) in [("--title", title), ("--artist", artist), ("--album", album), ("--comment", comment)]
        where value != nil {
            return name
        }
        return tags.isEmpty ? nil : "--tag"
    }

    /// The user's tags, in file order.
    func parsed() throws -> StreamTags {
        var result = StreamTags()
        let shorthands = [("TITLE", title), ("ARTIST", artist), ("ALBUM", album), ("COMMENT", comment)]
        for case let (key, value?) in shorthands {
            result.add(key, value)
        }
        for tag in tags {
            guard let equals = tag.firstIndex(of: "=") else {
                throw ValidationError("tag '\(tag)' is not KEY=VALUE: it has no '='")
            }
            let key = String(tag[..<equals])
            guard !key.isEmpty else {
                throw ValidationError("tag '\(tag)' is not KEY=VALUE: the key is empty")
            }
            if let character = StreamTags.invalidKeyCharacter(in: key) {
                throw ValidationError("""
                    tag '\(tag)' is not KEY=VALUE: a key is printable ASCII (0x20–0x7D), \
                    and '\(character)' is not
                    """)
            }
            result.add(key, String(tag[tag.index(after: equals)...]))
        }
        return result
    }
}
