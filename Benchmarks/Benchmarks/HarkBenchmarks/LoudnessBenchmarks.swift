import AudioFormat
import Benchmark
import Loudness

/// The loudness meter every recording runs on its encoder thread (EBU R128: K-weighting, gating
/// blocks, short-term values, true peak), fed 1 s of audio in 125 ms periods as a session feeds
/// it: 48 kHz stereo and 5.1, and 7.1 at 192 kHz in 32 bits (where the true peak is the sample
/// peak, and the K-weighting runs four lanes at a time). Hot path: no malloc allowed. The meter
/// keeps measuring across iterations, so they see a recording in its steady state, its histograms
/// filling.
func registerLoudnessBenchmarks() {
    let shapes: [(String, PCMFormat)] = [
        ("S16_LE_stereo", PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)),
        ("S24_LE_stereo", PCMFormat(sampleFormat: .s24LE, channels: 2, sampleRate: 48_000)),
        ("S16_LE_5.1", PCMFormat(sampleFormat: .s16LE, channels: 6, sampleRate: 48_000)),
        ("S32_LE_7.1", PCMFormat(sampleFormat: .s32LE, channels: 8, sampleRate: 192_000)),
    ]
    for (name, format) in shapes {
        let state = SetupState<(meter: LoudnessMeter, second: [UInt8])>()
        Benchmark("Loudness_meter_\(name.replacingOccurrences(of: ".", with: "_"))_music_1s_\(format.sampleRate / 1000)kHz_125ms_periods",
                  configuration: HotPath.configuration) { benchmark in
            let (meter, second) = state.value!
            let period = format.sampleRate / 8 * format.bytesPerFrame
            for _ in benchmark.scaledIterations {
                second.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        meter.measure(UnsafeRawBufferPointer(rebasing: bytes[offset..<min(bytes.count, offset + period)]))
                        offset += period
                    }
                }
            }
        } setup: {
            let meter = LoudnessMeter(format: format)!
            let second = oneSecondBlock(format.sampleFormat, channels: format.channels, rate: format.sampleRate)
            second.withUnsafeBytes { meter.measure($0) }  // Warm up: the first blocks and short-term values.
            state.value = (meter, second)
        }
    }
}
