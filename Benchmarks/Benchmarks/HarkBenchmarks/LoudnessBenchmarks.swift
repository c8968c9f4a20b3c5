import AudioFormat
import Benchmark
import Loudness

/// The loudness meter every recording runs on its encoder thread (EBU R128: K-weighting, gating
/// blocks, short-term values, true peak), fed 1 s of 48 kHz audio in 125 ms periods as a session
/// feeds it. Hot path: no malloc allowed. The meter keeps measuring across iterations, so they
/// see a recording in its steady state, its histograms filling.
func registerLoudnessBenchmarks() {
    let shapes: [(String, PCMFormat)] = [
        ("S16_LE_stereo", PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)),
        ("S24_LE_stereo", PCMFormat(sampleFormat: .s24LE, channels: 2, sampleRate: 48_000)),
        ("S16_LE_5.1", PCMFormat(sampleFormat: .s16LE, channels: 6, sampleRate: 48_000)),
    ]
    for (name, format) in shapes {
        let state = SetupState<(meter: LoudnessMeter, second: [UInt8])>()
        Benchmark("Loudness_meter_\(name.replacingOccurrences(of: ".", with: "_"))_music_1s_48kHz_125ms_periods",
                  configuration: HotPath.configuration) { benchmark in
            let (meter, second) = state.value!
            let period = 6_000 * format.bytesPerFrame
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
