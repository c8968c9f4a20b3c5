import ArgumentParser
import AudioFormat
import Capture

/// `hark record`'s device options, with arecord's letters.
struct CaptureOptions: ParsableArguments {
    @Option(name: [.customShort("D"), .long], help: ArgumentHelp("Capture device: a sound-server source's name or part of its description (\"Blue Yeti\"), or an ALSA device name (see 'hark devices').", valueName: "name"))
    var device = "default"

    // Numbers are parsed unconditionally, so `-r -1` is "outside 1000–768000", not "missing value".
    @Option(name: .shortAndLong, parsing: .unconditional, help: ArgumentHelp("Sample rate in Hz (1000–768000).", valueName: "hz"))
    var rate = 48_000

    @Option(name: .shortAndLong, parsing: .unconditional, help: ArgumentHelp("Channels (1–8; Opus: 1–2).", valueName: "n"))
    var channels = 2

    @Option(name: [.customShort("f"), .customLong("sample-format")],
            help: ArgumentHelp("S16_LE, S24_LE, S32_LE or FLOAT_LE (stored as 24-bit in FLAC).", valueName: "format"))
    var sampleFormat = "S16_LE"

    @Option(name: [.customShort("F"), .customLong("period-time")], parsing: .unconditional,
            help: ArgumentHelp("Device period in microseconds (as arecord's -F).", valueName: "µs"))
    var periodTime = CaptureRequest.defaultPeriodMicroseconds

    @Option(name: [.customShort("B"), .customLong("buffer-time")], parsing: .unconditional,
            help: ArgumentHelp("Device buffer in microseconds (as arecord's -B).", valueName: "µs"))
    var bufferTime = CaptureRequest.defaultBufferMicroseconds

    @Flag(name: .customLong("pad-overruns"),
          help: "Fill audio the device or sound server lost (an overrun) with silence, so the file's timeline stays true to the clock.")
    var padOverruns = false

    func validate() throws {
        guard SampleFormat(alsaName: sampleFormat) != nil else {
            throw ValidationError("unknown sample format '\(sampleFormat)'; use S16_LE, S24_LE, S32_LE or FLOAT_LE")
        }
        guard (1_000...768_000).contains(rate) else { throw ValidationError("rate \(rate) Hz is outside 1000–768000") }
        guard (1...8).contains(channels) else { throw ValidationError("channels \(channels) is outside 1–8") }
        guard (1_000...2_000_000).contains(periodTime) else {
            throw ValidationError("period time \(periodTime) µs is outside 1000–2000000")
        }
        guard bufferTime >= 2 * periodTime, bufferTime <= 10_000_000 else {
            throw ValidationError("buffer time \(bufferTime) µs must be at least twice the period time and at most 10 s")
        }
    }

    var format: PCMFormat {
        PCMFormat(sampleFormat: SampleFormat(alsaName: sampleFormat)!, channels: channels, sampleRate: rate)
    }

    var request: CaptureRequest {
        CaptureRequest(device: device, format: format, periodMicroseconds: periodTime, bufferMicroseconds: bufferTime)
    }
}
