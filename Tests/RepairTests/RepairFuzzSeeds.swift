import AudioFormat
import Encoding
import Foundation
import SignalGenerator

/// The files the repair fuzzer mutates: what hark's own encoders write, each both finished and as a
/// SIGKILL leaves it (the bytes on disk before `finish()`: FLAC without its totals, MD5 or seek
/// table filled in, Ogg Opus without its last page, WAV with the sizes of its last header update).
struct RepairFuzzSeed {
    enum Container: String { case flac, opus, wav }

    let name: String
    let container: Container
    let bytes: [UInt8]

    /// The test signal in each layout the recorder writes (short, so the suite's run checks many
    /// files in a few seconds; long enough for several frames and pages): 16-bit stereo, 24-bit 5.1
    /// (FLAC's and WAVE's channel mask; Opus mapping family 1), float WAV (WAVE_FORMAT_EXTENSIBLE
    /// with its `fact` chunk), 8 kHz mono; then each finished and unfinished.
    static func all() throws -> [RepairFuzzSeed] {
        let stereo = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let surround = PCMFormat(sampleFormat: .s24LE, channels: 6, sampleRate: 48_000)
        let float = PCMFormat(sampleFormat: .floatLE, channels: 2, sampleRate: 44_100)
        let phone = PCMFormat(sampleFormat: .s16LE, channels: 1, sampleRate: 8_000)
        let fivePointOne = ChannelLayout.waveDefault(channels: 6)
        var seeds: [RepairFuzzSeed] = []
        for finished in [true, false] {
            seeds += try [
                make("stereo", .flac, stereo, seconds: 0.5, finished: finished) { try FLACEncoder(format: stereo, settings: FLACSettings(), sink: $0) },
                make("5.1-s24", .flac, surround, seconds: 0.25, finished: finished) {
                    try FLACEncoder(format: surround, settings: FLACSettings(), sink: $0, layout: fivePointOne)
                },
                make("stereo", .opus, stereo, seconds: 0.5, finished: finished) { try OggOpusEncoder(format: stereo, settings: OpusSettings(), sink: $0) },
                make("5.1-s24", .opus, surround, seconds: 0.25, finished: finished) {
                    try OggOpusEncoder(format: surround, settings: OpusSettings(), sink: $0, layout: fivePointOne)
                },
                make("stereo", .wav, stereo, seconds: 0.5, finished: finished) {
                    try WAVEncoder(format: stereo, tags: StreamTags(), sink: $0, headerUpdateFrames: 7_000)
                },
                make("float", .wav, float, seconds: 0.5, finished: finished) {
                    try WAVEncoder(format: float, tags: StreamTags(), sink: $0, headerUpdateFrames: 5_000)
                },
                make("5.1-s24", .wav, surround, seconds: 0.25, finished: finished) {
                    try WAVEncoder(format: surround, tags: StreamTags(), sink: $0, headerUpdateFrames: 5_000, layout: fivePointOne)
                },
                make("mono-8k", .flac, phone, seconds: 1, finished: finished) { try FLACEncoder(format: phone, settings: FLACSettings(), sink: $0) },
            ]
        }
        return seeds
    }

    /// `seconds` of `format` through the encoder `start` makes, read back from its file.
    private static func make(_ name: String, _ container: Container, _ format: PCMFormat, seconds: Double, finished: Bool,
                             _ start: (OutputSink) throws -> any AudioEncoder) throws -> RepairFuzzSeed {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hark-fuzz-seed-\(getpid()).\(container)").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(descriptor); unlink(path) }
        let encoder = try start(OutputSink(fileDescriptor: descriptor))
        let bits = format.sampleFormat == .s16LE ? 16 : 24
        let samples = MusicLikeSignal.samples(frames: Int(seconds * Double(format.sampleRate)), channels: format.channels,
                                              sampleRate: format.sampleRate, bits: bits)
        let input = MusicLikeSignal.alsaBytes(samples, format: format.sampleFormat)
        // In pieces of a tenth of a second, as the encoder thread hands them over.
        let piece = format.sampleRate / 10 * format.bytesPerFrame
        for start in stride(from: 0, to: input.count, by: piece) {
            try input[start..<min(input.count, start + piece)].withUnsafeBytes { try encoder.encode($0) }
        }
        if finished { try encoder.finish() }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return RepairFuzzSeed(name: "\(name)\(finished ? "" : "-killed").\(container)", container: container, bytes: bytes)
    }
}
