import AudioFormat
import Foundation

/// A deterministic, music-like test signal: a melody of harmonic notes with an envelope, a second
/// voice, and a little noise, different in every channel. Never silence, never a single sine, so a
/// bit-exact comparison catches dropped, repeated or reordered frames.
struct TestSignal {
    let format: PCMFormat
    /// Interleaved samples at the format's resolution (16, 24 or 32 significant bits).
    let samples: [Int32]

    init(format: PCMFormat, frames: Int) {
        self.format = format
        let bits = format.sampleFormat.encodedBitsPerSample
        let fullScale = Double(Int64(1) << (bits - 1)) - 1
        let rate = Double(format.sampleRate)
        let melody: [Double] = [220, 277.18, 329.63, 440, 392, 329.63, 293.66, 246.94]
        var noiseState: UInt32 = 0x1234_5678
        var samples = [Int32](repeating: 0, count: frames * format.channels)
        for frame in 0..<frames {
            let time = Double(frame) / rate
            let noteIndex = Int(time * 4) % melody.count
            let noteTime = time.truncatingRemainder(dividingBy: 0.25)
            let envelope = exp(-noteTime * 6)
            for channel in 0..<format.channels {
                let pitch = melody[noteIndex] * (1 + Double(channel) * 0.5)
                var value = 0.0
                for harmonic in 1...4 {
                    value += sin(2 * .pi * pitch * Double(harmonic) * time + Double(channel)) / Double(harmonic * 2)
                }
                value = value * envelope * 0.6 + 0.15 * sin(2 * .pi * 110 * time + Double(channel))
                noiseState = noiseState &* 1_664_525 &+ 1_013_904_223
                value += (Double(noiseState >> 8) / Double(1 << 24) - 0.5) * 0.01
                samples[frame * format.channels + channel] = Int32((value * 0.7 * fullScale).rounded())
            }
        }
        self.samples = samples
    }

    var frames: Int { samples.count / format.channels }

    /// The bytes an ALSA device delivers in this format (S24_LE in 4-byte containers, sign-extended).
    var alsaBytes: Data {
        var data = Data(capacity: samples.count * format.sampleFormat.bytesPerSample)
        for sample in samples {
            switch format.sampleFormat {
            case .s16LE: withUnsafeBytes(of: Int16(sample).littleEndian) { data.append(contentsOf: $0) }
            case .s24LE, .s32LE: withUnsafeBytes(of: sample.littleEndian) { data.append(contentsOf: $0) }
            case .floatLE:
                let value = Float(sample) / 8_388_608
                withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) }
            }
        }
        return data
    }

    /// The first `frames` frames.
    func prefix(frames: Int) -> ArraySlice<Int32> { samples.prefix(frames * format.channels) }
}

/// Reads the raw little-endian signed output of `flac -d --force-raw-format` back into samples.
func decodeRawSamples(_ data: Data, bitsPerSample: Int) -> [Int32] {
    let width = bitsPerSample / 8
    var samples = [Int32]()
    samples.reserveCapacity(data.count / width)
    data.withUnsafeBytes { bytes in
        var offset = 0
        while offset + width <= bytes.count {
            var value: UInt32 = 0
            for byte in 0..<width { value |= UInt32(bytes[offset + byte]) << (8 * byte) }
            let shift = UInt32(32 - bitsPerSample)
            samples.append(Int32(bitPattern: value << shift) >> shift)
            offset += width
        }
    }
    return samples
}

/// Where two sample sequences first differ, for failure messages.
func firstDifference(_ a: some Collection<Int32>, _ b: some Collection<Int32>) -> String {
    for (index, pair) in zip(a, b).enumerated() where pair.0 != pair.1 {
        return "first difference at sample \(index): \(pair.0) vs \(pair.1) (counts \(a.count), \(b.count))"
    }
    return a.count == b.count ? "identical" : "counts differ: \(a.count) vs \(b.count)"
}
