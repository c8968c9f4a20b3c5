// Writes the music-like test signal as raw interleaved S16_LE to stdout: the same deterministic
// signal the tests (SignalGenerator) and Benchmarks/compare use.
//
//     hark-signal SECONDS [RATE] [CHANNELS] > input.raw
//
// Generated in one-second pieces with the sample clock running on, so any length is one
// continuous signal, the same on every machine.
import AudioFormat
import SignalGenerator
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
guard let seconds = arguments.first, seconds > 0 else {
    _ = "usage: hark-signal SECONDS [RATE] [CHANNELS] > file.raw\n".withCString { write(2, $0, strlen($0)) }
    exit(64)
}
let rate = arguments.count > 1 ? arguments[1] : 48_000
let channels = arguments.count > 2 ? arguments[2] : 2
for second in 0..<seconds {
    let samples = MusicLikeSignal.samples(frames: rate, channels: channels, sampleRate: rate, bits: 16, startFrame: second * rate)
    let bytes = MusicLikeSignal.alsaBytes(samples, format: .s16LE)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
        if written <= 0 { exit(74) }
        offset += written
    }
}
