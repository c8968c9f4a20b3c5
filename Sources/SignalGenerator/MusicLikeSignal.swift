import AudioFormat
#if canImport(Glibc)
import Glibc
#endif

/// A deterministic, music-like test signal: a melody of harmonic notes with a decaying envelope,
/// a bass voice and a little noise, different in every channel. Never silence and never a single
/// sine, so bit-exact comparisons catch dropped, repeated or reordered frames, and encoders are
/// measured on something like music. Used by the tests, the benchmarks and `Benchmarks/compare`.
public enum MusicLikeSignal {
    /// `frames` interleaved frames at `bits` of resolution (16, 24 or 32), full scale × 0.7 at most.
    public static func samples(frames: Int, channels: Int, sampleRate: Int, bits: Int, startFrame: Int = 0) -> [Int32] {
        let fullScale = Double(Int64(1) << (bits - 1)) - 1
        let rate = Double(sampleRate)
        let melody: [Double] = [220, 277.18, 329.63, 440, 392, 329.63, 293.66, 246.94]
        var noise = NoiseSource(seed: 0x1234_5678 &+ UInt32(truncatingIfNeeded: startFrame))
        var samples = [Int32](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            let time = Double(startFrame + frame) / rate
            let noteIndex = Int(time * 4) % melody.count
            let envelope = exp(-time.truncatingRemainder(dividingBy: 0.25) * 6)
            for channel in 0..<channels {
                let pitch = melody[noteIndex] * (1 + Double(channel) * 0.5)
                var value = 0.0
                for harmonic in 1...4 {
                    value += sin(2 * .pi * pitch * Double(harmonic) * time + Double(channel)) / Double(harmonic * 2)
                }
                value = value * envelope * 0.6 + 0.15 * sin(2 * .pi * 110 * time + Double(channel))
                value += noise.next() * 0.01
                samples[frame * channels + channel] = Int32((value * 0.7 * fullScale).rounded())
            }
        }
        return samples
    }

    /// The bytes an ALSA device delivers for `samples` in `format` (S24_LE in 4-byte containers,
    /// sign-extended; FLOAT_LE as the 24-bit value scaled to [-1, 1)).
    public static func alsaBytes(_ samples: [Int32], format: SampleFormat) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * format.bytesPerSample)
        for sample in samples {
            switch format {
            case .s16LE: withUnsafeBytes(of: Int16(truncatingIfNeeded: sample).littleEndian) { bytes.append(contentsOf: $0) }
            case .s24LE, .s32LE: withUnsafeBytes(of: sample.littleEndian) { bytes.append(contentsOf: $0) }
            case .floatLE:
                withUnsafeBytes(of: (Float(sample) / 8_388_608).bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            }
        }
        return bytes
    }
}

/// A linear congruential generator for the signal's noise: the same numbers on every machine.
struct NoiseSource {
    private var state: UInt32
    init(seed: UInt32) { state = seed }

    /// A value in [-0.5, 0.5).
    mutating func next() -> Double {
        state = state &* 1_664_525 &+ 1_013_904_223
        return Double(state >> 8) / Double(1 << 24) - 0.5
    }
}
