import AudioFormat
import Loudness
import SignalGenerator
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Interleaved 16-bit test signals, and the same samples laid out in every capture format, so
/// that each of `LoudnessMeter`'s input paths sees exactly the same signal.
enum TestSignal {
    /// A sine of `frequency` Hz with its peak at `peakDBFS`, the same in every channel.
    static func sine(frequency: Double = 1000, peakDBFS: Double, seconds: Double, channels: Int = 2,
                     sampleRate: Int = 48_000) -> [Int16] {
        let amplitude = 32767 * pow(10, peakDBFS / 20)
        let frames = Int(seconds * Double(sampleRate))
        var samples = [Int16](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            let value = Int16((amplitude * sin(2 * .pi * frequency * Double(frame) / Double(sampleRate))).rounded())
            for channel in 0..<channels { samples[frame * channels + channel] = value }
        }
        return samples
    }

    /// Uniform white noise peaking at `peakDBFS`, independent in every channel, from SplitMix64.
    static func whiteNoise(seed: UInt64 = 0x5EED, peakDBFS: Double, seconds: Double, channels: Int = 2,
                           sampleRate: Int = 48_000) -> [Int16] {
        var random = SplitMix64(seed: seed)
        let amplitude = 32767 * pow(10, peakDBFS / 20)
        let count = Int(seconds * Double(sampleRate)) * channels
        return (0..<count).map { _ in
            let unit = Double(random.next() >> 11) / Double(1 << 53) * 2 - 1
            return Int16((unit * amplitude).rounded())
        }
    }

    /// SignalGenerator's music-like signal at 16 bits.
    static func music(seconds: Double, channels: Int = 2, sampleRate: Int = 48_000, startFrame: Int = 0) -> [Int16] {
        MusicLikeSignal.samples(frames: Int(seconds * Double(sampleRate)), channels: channels, sampleRate: sampleRate,
                                bits: 16, startFrame: startFrame).map { Int16($0) }
    }

    /// The music-like signal in sections at different levels (0, −12, −6, −18 dB, … for
    /// `sectionSeconds` each), so that its loudness range is several LU rather than about 0.
    static func musicWithChangingLevel(seconds: Double, sectionSeconds: Double = 6, channels: Int = 2,
                                       sampleRate: Int = 48_000) -> [Int16] {
        let levels: [Double] = [0, -12, -6, -18, -3, -9]
        let framesPerSection = Int(sectionSeconds * Double(sampleRate))
        var samples = music(seconds: seconds, channels: channels, sampleRate: sampleRate)
        for index in samples.indices {
            let section = index / channels / framesPerSection
            let gain = pow(10, levels[section % levels.count] / 20)
            samples[index] = Int16((Double(samples[index]) * gain).rounded())
        }
        return samples
    }

    /// Something like speech: the music-like signal cut into "words" of 0.2–1.5 s at levels
    /// between −8 and 0 dB, with pauses of 0.1–0.8 s, drawn from SplitMix64.
    static func speechLike(seed: UInt64 = 0x5EEC4, seconds: Double, channels: Int = 2, sampleRate: Int = 48_000) -> [Int16] {
        var random = SplitMix64(seed: seed)
        func uniform(_ range: ClosedRange<Double>) -> Double {
            range.lowerBound + Double(random.next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
        }
        var samples = music(seconds: seconds, channels: channels, sampleRate: sampleRate)
        let frames = samples.count / channels
        var frame = 0
        while frame < frames {
            let word = Int(uniform(0.2...1.5) * Double(sampleRate))
            let pause = Int(uniform(0.1...0.8) * Double(sampleRate))
            let gain = pow(10, uniform(-8...0) / 20)
            for index in frame * channels..<min(frames, frame + word + pause) * channels {
                samples[index] = index < (frame + word) * channels ? Int16((Double(samples[index]) * gain).rounded()) : 0
            }
            frame += word + pause
        }
        return samples
    }

    /// EBU Tech 3342's test signals: a stereo 1 kHz sine at each `(dBFS, seconds)` in turn.
    /// Case 1 is −20 then −30 dBFS for 20 s each (range 10 LU), case 2 −20/−15 (5 LU), case 3
    /// −40/−20 (20 LU), case 4 −50/−35/−20/−35/−50 (15 LU).
    static func tech3342(_ parts: [(dBFS: Double, seconds: Double)]) -> [Int16] {
        parts.flatMap { sine(peakDBFS: $0.dBFS, seconds: $0.seconds) }
    }

    /// `samples` with each channel multiplied by its entry of `gains`.
    static func scaled(_ samples: [Int16], channelGains gains: [Double]) -> [Int16] {
        samples.indices.map { Int16((Double(samples[$0]) * gains[$0 % gains.count]).rounded()) }
    }

    /// The bytes a device would deliver for `samples` in `format`: S16_LE as is; S24_LE as the
    /// 16-bit value shifted into the low three bytes of a 4-byte container whose top byte is
    /// `topByte` (the meter must ignore it); S32_LE shifted to the top; FLOAT_LE divided by 32,768.
    /// Every form is exact, so every path should measure the same.
    static func bytes(_ samples: [Int16], as format: SampleFormat, topByte: UInt8 = 0) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * format.bytesPerSample)
        for sample in samples {
            switch format {
            case .s16LE:
                withUnsafeBytes(of: sample.littleEndian) { bytes.append(contentsOf: $0) }
            case .s24LE:
                let container = (UInt32(bitPattern: Int32(sample) << 8) & 0x00FF_FFFF) | UInt32(topByte) << 24
                withUnsafeBytes(of: container.littleEndian) { bytes.append(contentsOf: $0) }
            case .s32LE:
                withUnsafeBytes(of: (Int32(sample) << 16).littleEndian) { bytes.append(contentsOf: $0) }
            case .floatLE:
                withUnsafeBytes(of: (Float(sample) / 32768).bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            }
        }
        return bytes
    }
}

/// Measures `bytes` in pieces of `pieceFrames` frames (a capture period), as the encoder thread does.
/// `kernels` is the build of the meter's loops (the processor's fastest unless a test says).
func measured(_ bytes: [UInt8], format: PCMFormat, layout: ChannelLayout? = nil, clipsFloats: Bool = false,
              pieceFrames: Int = 1_000, kernels: LoudnessKernelChoice = .fastest) throws -> LoudnessMeasurement {
    let meter = try #require(LoudnessMeter(format: format, layout: layout, clipsFloats: clipsFloats, kernels: kernels))
    feed(meter, bytes, pieceFrames: pieceFrames)
    return meter.measurement
}

func feed(_ meter: LoudnessMeter, _ bytes: [UInt8], pieceFrames: Int = 1_000) {
    let pieceBytes = pieceFrames * meter.format.bytesPerFrame
    bytes.withUnsafeBytes { all in
        var offset = 0
        while offset < all.count {
            let end = min(all.count, offset + pieceBytes)
            meter.measure(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
            offset = end
        }
    }
}

extension PCMFormat {
    static func s16(channels: Int = 2, rate: Int = 48_000) -> PCMFormat {
        PCMFormat(sampleFormat: .s16LE, channels: channels, sampleRate: rate)
    }
}

/// "−20.00" for a test's printed comparison.
func text(_ value: Double?) -> String {
    guard let value else { return "nil" }
    let hundredths = (value * 100).rounded() / 100
    return "\(hundredths)"
}
