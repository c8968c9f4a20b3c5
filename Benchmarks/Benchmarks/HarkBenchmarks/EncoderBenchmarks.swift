import AudioFormat
import Benchmark
import Encoding
#if canImport(Glibc)
import Glibc
#endif

/// Where a benchmarked encoder writes.
private enum BenchmarkOutput {
    /// /dev/null: not seekable, like a pipe.
    case devNull
    /// An unlinked temporary file: seekable, so FLAC keeps its seek table up to date as it writes.
    case seekableFile
}

/// An encoder in its steady state, writing to `output`, and a block of signal to feed it.
private final class EncoderState: @unchecked Sendable {
    let encoder: any AudioEncoder
    let block: [UInt8]
    let descriptor: Int32

    init(_ output: BenchmarkOutput, _ make: (OutputSink) throws -> any AudioEncoder) throws {
        switch output {
        case .devNull:
            descriptor = open("/dev/null", O_WRONLY)
        case .seekableFile:
            var template = Array("/tmp/hark-benchmark-XXXXXX".utf8CString)
            descriptor = mkstemp(&template)
            unlink(template)
        }
        encoder = try make(OutputSink(fileDescriptor: descriptor))
        block = oneSecondBlock(.s16LE)
        // Warm up: the first call sets up the libraries' buffers (libopusenc's page buffer).
        try block.withUnsafeBytes { try encoder.encode($0) }
    }

    deinit { close(descriptor) }
}

func registerEncoderBenchmarks() {
    let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    var encoders: [(String, BenchmarkOutput, (OutputSink) throws -> any AudioEncoder)] = []
    for level in [0, 5, 8] {
        encoders.append(("FLAC_level\(level)", .devNull, {
            try FLACEncoder(format: format, settings: FLACSettings(compressionLevel: level), sink: $0)
        }))
    }
    // A file: every frame also updates the seek table. Four points fill after 40 s, so the
    // iterations also run its halving (spacing 20 s, 40 s, 80 s, …).
    encoders.append(("FLAC_level5_seekable_file", .seekableFile, {
        try FLACEncoder(format: format, settings: FLACSettings(compressionLevel: 5), sink: $0,
                        seekPointCapacity: 4)
    }))
    for kbps in [64.0, 128.0] {
        encoders.append(("Opus_\(Int(kbps))kbps", .devNull, {
            try OggOpusEncoder(format: format, settings: OpusSettings(bitrateKbps: kbps), sink: $0)
        }))
    }
    for (name, output, make) in encoders {
        let state = SetupState<EncoderState>()
        Benchmark("Encode_\(name)_steady_state_1s_48kHz_stereo",
                  configuration: HotPath.configuration) { benchmark in
            let encoder = state.value!.encoder
            let block = state.value!.block
            for _ in benchmark.scaledIterations {
                block.withUnsafeBytes { try! encoder.encode($0) }
            }
        } setup: {
            state.value = try EncoderState(output, make)
        }
    }
}
