import AudioFormat
import Benchmark
import Encoding
import SignalGenerator

/// One second of 48 kHz stereo music-like signal in `format`, as the ring holds it.
func oneSecondBlock(_ format: SampleFormat, channels: Int = 2, rate: Int = 48_000) -> [UInt8] {
    let samples = MusicLikeSignal.samples(frames: rate, channels: channels, sampleRate: rate, bits: format.encodedBitsPerSample)
    return MusicLikeSignal.alsaBytes(samples, format: format)
}

/// Preallocated input and output for one second of samples.
private final class ConversionBuffers: @unchecked Sendable {
    let input: [UInt8]
    let integers = UnsafeMutablePointer<Int32>.allocate(capacity: 96_000)
    let floats = UnsafeMutablePointer<Float>.allocate(capacity: 96_000)
    init(_ format: SampleFormat) { input = oneSecondBlock(format) }
}

func registerConversionBenchmarks() {
    for format in [SampleFormat.s16LE, .s24LE, .s32LE] {
        let state = SetupState<ConversionBuffers>()
        Benchmark("Convert_\(format.alsaName)_to_Int32_1s_stereo",
                  configuration: HotPath.configuration) { benchmark in
            let buffers = state.value!
            for _ in benchmark.scaledIterations {
                buffers.input.withUnsafeBytes { bytes in
                    SampleConversion.toInt32(bytes.baseAddress!, format: format, sampleCount: 96_000, into: buffers.integers)
                }
                blackHole(buffers.integers[95_999])
            }
        } setup: {
            state.value = ConversionBuffers(format)
        }

        let floatState = SetupState<ConversionBuffers>()
        Benchmark("Convert_\(format.alsaName)_to_Float_1s_stereo",
                  configuration: HotPath.configuration) { benchmark in
            let buffers = floatState.value!
            for _ in benchmark.scaledIterations {
                buffers.input.withUnsafeBytes { bytes in
                    SampleConversion.toFloat(bytes.baseAddress!, format: format, sampleCount: 96_000, into: buffers.floats)
                }
                blackHole(buffers.floats[95_999])
            }
        } setup: {
            floatState.value = ConversionBuffers(format)
        }
    }
}
