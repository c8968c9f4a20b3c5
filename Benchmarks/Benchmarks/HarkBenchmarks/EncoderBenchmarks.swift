import AudioFormat
import Benchmark
import Encoding
#if canImport(Glibc)
import Glibc
#endif

/// An encoder in its steady state, writing to /dev/null, and a block of signal to feed it.
private final class EncoderState: @unchecked Sendable {
    let encoder: any AudioEncoder
    let block: [UInt8]
    let devNull: Int32

    init(_ make: (OutputSink) throws -> any AudioEncoder) throws {
        devNull = open("/dev/null", O_WRONLY)
        encoder = try make(OutputSink(fileDescriptor: devNull))
        block = oneSecondBlock(.s16LE)
        // Warm up: the first call sets up the libraries' buffers (libopusenc's page buffer).
        try block.withUnsafeBytes { try encoder.encode($0) }
    }

    deinit { close(devNull) }
}

func registerEncoderBenchmarks() {
    let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    var encoders: [(String, (OutputSink) throws -> any AudioEncoder)] = []
    for level in [0, 5, 8] {
        encoders.append(("FLAC_level\(level)", {
            try FLACEncoder(format: format, settings: FLACSettings(compressionLevel: level), sink: $0)
        }))
    }
    for kbps in [64.0, 128.0] {
        encoders.append(("Opus_\(Int(kbps))kbps", {
            try OggOpusEncoder(format: format, settings: OpusSettings(bitrateKbps: kbps), sink: $0)
        }))
    }
    for (name, make) in encoders {
        let state = SetupState<EncoderState>()
        Benchmark("Encode_\(name)_steady_state_1s_48kHz_stereo",
                  configuration: HotPath.configuration) { benchmark in
            let encoder = state.value!.encoder
            let block = state.value!.block
            for _ in benchmark.scaledIterations {
                block.withUnsafeBytes { try! encoder.encode($0) }
            }
        } setup: {
            state.value = try EncoderState(make)
        }
    }
}
