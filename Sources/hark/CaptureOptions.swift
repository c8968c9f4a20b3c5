import ArgumentParser
import AudioFormat
import Capture

/// `hark record`'s device options, with arecord's letters.
struct CaptureOptions: ParsableArguments {
    @Option(name: [.customShort("D"), .long], help: ArgumentHelp("Capture device: a sound-server source's name or part of its description (\"Blue Yeti\"), or an ALSA device name (see 'hark devices').", valueName: "name"))
    var device = CaptureOptions.defaultDevice

    /// ALSA's name for the device it is set up to use (a sound server's default source, where one runs).
    static let defaultDevice = "default"

    // Numbers are parsed unconditionally, so `-r -1` is "outside 1000–768000", not "missing value".
    // Optional, so that --speech can tell a rate the user gave from the default.
    @Option(name: [.customShort("r"), .customLong("rate")], parsing: .unconditional,
            help: ArgumentHelp("Sample rate in Hz (1000–768000; default 48000).", valueName: "hz"))
    var rateOption: Int?

    @Option(name: [.customShort("c"), .customLong("channels")], parsing: .unconditional,
            help: ArgumentHelp("Channels (1–8; default 2). Opus with 3–8 needs the layout: the device's channel map or --channel-map.", valueName: "n"))
    var channelsOption: Int?

    @Option(name: [.customShort("f"), .customLong("sample-format")],
            help: ArgumentHelp("S16_LE, S24_LE, S32_LE or FLOAT_LE (default S16_LE). FLAC stores S32_LE as 32-bit (libFLAC 1.4; ffmpeg before 6.1 cannot read it) and FLOAT_LE as 24-bit.", valueName: "format"),
            completion: .list(SampleFormat.allCases.map(\.alsaName)))
    var sampleFormatOption: String?

    @Flag(help: "Speech preset: 16000 Hz, mono, S16_LE, what speech tools (whisper.cpp, vosk, nerd-dictation) read; with -o -, raw samples on stdout unless --format says otherwise.")
    var speech = false

    @Option(name: .customLong("channel-map"),
            help: ArgumentHelp("Which speaker each channel is, in the device's order, as ALSA names them: FL, FR, FC, LFE, RL, RR, SL, SR, RC, FLC, FRC, MONO (e.g. FL,FR,FC,LFE,RL,RR). Default: the device's own channel map. Opus with 3–8 channels needs one of the two.",
                               valueName: "positions"))
    var channelMap: String?

    var rate: Int { rateOption ?? (speech ? 16_000 : 48_000) }
    var channels: Int { channelsOption ?? (speech ? 1 : 2) }
    var sampleFormat: String { sampleFormatOption ?? "S16_LE" }

    @Option(name: [.customShort("F"), .customLong("period-time")], parsing: .unconditional,
            help: ArgumentHelp("Device period in microseconds (as arecord's -F).", valueName: "µs"))
    var periodTime = CaptureRequest.defaultPeriodMicroseconds

    @Option(name: [.customShort("B"), .customLong("buffer-time")], parsing: .unconditional,
            help: ArgumentHelp("Device buffer in microseconds (as arecord's -B); from a sound-server source at least 2 s (as far as the server's 4 MiB limit allows: 0.68 s at 192 kHz × 8 × 32-bit), the server's queue being the only buffer while the capture thread sleeps.", valueName: "µs"))
    var bufferTime = CaptureRequest.defaultBufferMicroseconds

    @Flag(name: .customLong("pad-overruns"),
          help: "Fill audio the device or sound server lost (an overrun), and frames an output's full ring dropped, with silence, so the file's timeline stays true to the clock.")
    var padOverruns = false

    func validate() throws {
        if device.allSatisfy(\.isWhitespace) {
            throw ValidationError("-D needs a device name ('hark devices' lists them; default is the sound server's default source)")
        }
        if speech, let given = [("-r", rateOption != nil), ("-c", channelsOption != nil), ("-f", sampleFormatOption != nil)]
            .first(where: \.1)?.0 {
            throw ValidationError("--speech sets 16000 Hz, mono, S16_LE; leave out \(given)")
        }
        guard SampleFormat(alsaName: sampleFormat) != nil else {
            throw ValidationError("unknown sample format '\(sampleFormat)'; use S16_LE, S24_LE, S32_LE or FLOAT_LE")
        }
        let rates = PCMFormat.recordableRates, channelCounts = PCMFormat.recordableChannels
        guard rates.contains(rate) else { throw ValidationError("rate \(rate) Hz is outside \(rates.lowerBound)–\(rates.upperBound)") }
        guard channelCounts.contains(channels) else {
            throw ValidationError("channels \(channels) is outside \(channelCounts.lowerBound)–\(channelCounts.upperBound)")
        }
        if let channelMap {
            guard let layout = ChannelLayout(parsing: channelMap) else {
                throw ValidationError("--channel-map '\(channelMap)' is not a list of distinct positions (FL, FR, FC, LFE, RL, RR, SL, SR, RC, FLC, FRC, MONO)")
            }
            guard layout.positions.count == channels else {
                throw ValidationError("--channel-map names \(layout.positions.count) channel\(layout.positions.count == 1 ? "" : "s"); the recording has \(channels)")
            }
        }
        guard (1_000...2_000_000).contains(periodTime) else {
            throw ValidationError("period time \(periodTime) µs is outside 1000–2000000")
        }
        if bufferTime < 2 * periodTime, bufferTime == CaptureRequest.defaultBufferMicroseconds {
            // The user gave -F alone: the buffer they did not set is not theirs to fix, -B is.
            throw ValidationError("period time \(periodTime) µs needs a buffer (-B) of at least twice it; the buffer is \(bufferTime) µs (the default unless -B says otherwise)")
        }
        guard bufferTime >= 2 * periodTime, bufferTime <= 10_000_000 else {
            throw ValidationError("buffer time \(bufferTime) µs must be at least twice the period time and at most 10 s")
        }
    }

    var format: PCMFormat {
        PCMFormat(sampleFormat: SampleFormat(alsaName: sampleFormat)!, channels: channels, sampleRate: rate)
    }

    var channelLayout: ChannelLayout? { channelMap.flatMap(ChannelLayout.init(parsing:)) }

    var request: CaptureRequest {
        CaptureRequest(device: device, format: format, periodMicroseconds: periodTime, bufferMicroseconds: bufferTime)
    }
}
