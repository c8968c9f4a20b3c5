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

    init(_ output: BenchmarkOutput, input: PCMFormat, blockFrames: Int? = nil,
         _ make: (OutputSink) throws -> any AudioEncoder) throws {
        switch output {
        case .devNull:
            descriptor = open("/dev/null", O_WRONLY)
        case .seekableFile:
            var template = Array("/tmp/hark-benchmark-XXXXXX".utf8CString)
            descriptor = mkstemp(&template)
            unlink(template)
        }
        encoder = try make(OutputSink(fileDescriptor: descriptor))
        let second = oneSecondBlock(input.sampleFormat, channels: input.channels, rate: input.sampleRate)
        block = blockFrames.map { Array(second.prefix($0 * input.bytesPerFrame)) } ?? second
        // Warm up: the first call sets up the libraries' buffers (libopusenc's page buffer).
        try block.withUnsafeBytes { try encoder.encode($0) }
    }

    deinit { close(descriptor) }
}

func registerEncoderBenchmarks() {
    let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    let standard = "1s_48kHz_stereo"
    var encoders: [(String, BenchmarkOutput, PCMFormat, String, Int?, (OutputSink) throws -> any AudioEncoder)] = []
    for level in [0, 5, 8] {
        encoders.append(("FLAC_level\(level)", .devNull, format, standard, nil, {
            try FLACEncoder(format: format, settings: FLACSettings(compressionLevel: level), sink: $0)
        }))
    }
    // A file: every frame also updates the seek table. Four points fill after 40 s, so the
    // iterations also run its halving (spacing 20 s, 40 s, 80 s, …).
    encoders.append(("FLAC_level5_seekable_file", .seekableFile, format, standard, nil, {
        try FLACEncoder(format: format, settings: FLACSettings(compressionLevel: 5), sink: $0,
                        seekPointCapacity: 4)
    }))
    for kbps in [64.0, 128.0] {
        encoders.append(("Opus_\(Int(kbps))kbps", .devNull, format, standard, nil, {
            try OggOpusEncoder(format: format, settings: OpusSettings(bitrateKbps: kbps), sink: $0)
        }))
    }
    // Opus's other input paths: 24-bit samples converted to float in hark's preallocated buffer,
    // and 44.1 kHz resampled to 48 kHz by libopusenc's resampler.
    let s24 = PCMFormat(sampleFormat: .s24LE, channels: 2, sampleRate: 48_000)
    encoders.append(("Opus_128kbps_from_S24_LE", .devNull, s24, standard, nil, {
        try OggOpusEncoder(format: s24, settings: OpusSettings(bitrateKbps: 128), sink: $0)
    }))
    let cd = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 44_100)
    encoders.append(("Opus_128kbps_resampled", .devNull, cd, "1s_44100Hz_stereo", nil, {
        try OggOpusEncoder(format: cd, settings: OpusSettings(bitrateKbps: 128), sink: $0)
    }))
    // Raw: the samples written as they are.
    encoders.append(("raw", .devNull, format, standard, nil, { RawPCMEncoder(format: format, sink: $0) }))
    // WAV to a file, its header rewritten after every 10 ms block rather than every half second
    // of audio, so each iteration runs the path a recording runs twice a second; and 24-bit samples packed.
    for input in [format, s24] {
        encoders.append(("WAV_\(input.sampleFormat.alsaName)_seekable_file_header_every_block", .seekableFile, input,
                         "10ms_48kHz_stereo", 480, {
            try WAVEncoder(format: input, tags: StreamTags(), sink: $0, headerUpdateFrames: 480)
        }))
    }
    for (name, output, input, suffix, blockFrames, make) in encoders {
        let state = SetupState<EncoderState>()
        Benchmark("Encode_\(name)_steady_state_\(suffix)",
                  configuration: HotPath.configuration) { benchmark in
            let encoder = state.value!.encoder
            let block = state.value!.block
            for _ in benchmark.scaledIterations {
                block.withUnsafeBytes { try! encoder.encode($0) }
            }
        } setup: {
            state.value = try EncoderState(output, input: input, blockFrames: blockFrames, make)
        }
    }
}
