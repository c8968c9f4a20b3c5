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
    static func all() throws -> [RepairFuzzSeed] { try made.get() }

    /// Made once per test process: several suites use them, in parallel.
    private static let made = Result { try makeAll() }

    private static func makeAll() throws -> [RepairFuzzSeed] {
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

    /// The same signal from the reference writers, where installed, whose files are laid out
    /// otherwise: `flac -5` (a seek table of its own and 8 KiB of padding), `opusenc` (pages of a
    /// second, 5.1 in its own channel mapping), sox (WAVE_FORMAT_PCM with no JUNK chunk). Each
    /// missing program is named in `missing`.
    static func fromReferenceWriters() throws -> (seeds: [RepairFuzzSeed], missing: [String]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hark-fuzz-writers-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for channels in [2, 6] {
            let samples = MusicLikeSignal.samples(frames: 24_000, channels: channels, sampleRate: 48_000, bits: 16)
            try Data(MusicLikeSignal.alsaBytes(samples, format: .s16LE)).write(to: URL(fileURLWithPath: "\(folder)/\(channels).raw"))
        }
        let raw = ["--force-raw-format", "--endian=little", "--sign=signed", "--bps=16", "--sample-rate=48000"]
        let writers: [(name: String, container: Container, tool: String, arguments: [String])] = [
            ("flac-5", .flac, "flac", ["-5", "-s", "-f"] + raw + ["--channels=2", "-o", "\(folder)/out", "\(folder)/2.raw"]),
            ("opusenc-5.1", .opus, "opusenc", ["--quiet", "--raw", "--raw-chan", "6", "--raw-rate", "48000", "\(folder)/6.raw", "\(folder)/out"]),
            ("sox", .wav, "sox", ["-t", "raw", "-r", "48000", "-e", "signed", "-b", "16", "-c", "2", "\(folder)/2.raw", "-t", "wav", "\(folder)/out"]),
        ]
        var seeds: [RepairFuzzSeed] = [], missing: [String] = []
        for writer in writers {
            let search = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            guard let tool = search.map({ "\($0)/\(writer.tool)" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
                missing.append(writer.tool)
                continue
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = writer.arguments
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(folder)/out")))
            seeds.append(RepairFuzzSeed(name: "\(writer.name).\(writer.container)", container: writer.container,
                                        bytes: writer.container == .opus ? withFixedSerial(bytes) : bytes))
        }
        return (seeds, missing)
    }

    /// `seconds` of `format` through the encoder `start` makes, read back from its file.
    private static func make(_ name: String, _ container: Container, _ format: PCMFormat, seconds: Double, finished: Bool,
                             _ start: (OutputSink) throws -> any AudioEncoder) throws -> RepairFuzzSeed {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hark-fuzz-seed-\(getpid())-\(UUID().uuidString).\(container)").path
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
        return RepairFuzzSeed(name: "\(name)\(finished ? "" : "-killed").\(container)", container: container,
                              bytes: container == .opus ? withFixedSerial(bytes) : bytes)
    }

    /// The stream with serial number 1 on every page (CRCs made again): the encoders choose one at
    /// random, and mutations that read page lengths through another page's bytes would otherwise
    /// make a seed's run different each time.
    static func withFixedSerial(_ stream: [UInt8]) -> [UInt8] {
        var bytes = stream
        for page in RepairFuzzMutator.oggPages(stream) {
            bytes.replaceSubrange((page.lowerBound + 14)..<(page.lowerBound + 18), with: [1, 0, 0, 0])
            RepairFuzzMutator.setOggCRC(&bytes, pageAt: page.lowerBound)
        }
        return bytes
    }
}
