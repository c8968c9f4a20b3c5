import AudioFormat
import Foundation
import SignalGenerator
import Testing

/// The music-like test signal (`SignalGenerator`) in a given PCM format.
struct TestSignal {
    let format: PCMFormat
    /// Interleaved samples at the format's resolution (16, 24 or 32 significant bits).
    let samples: [Int32]

    init(format: PCMFormat, frames: Int) {
        self.format = format
        samples = MusicLikeSignal.samples(frames: frames, channels: format.channels, sampleRate: format.sampleRate,
                                          bits: format.sampleFormat.encodedBitsPerSample)
    }

    var frames: Int { samples.count / format.channels }

    /// The bytes an ALSA device delivers in this format (S24_LE in 4-byte containers, sign-extended).
    var alsaBytes: Data { Data(MusicLikeSignal.alsaBytes(samples, format: format.sampleFormat)) }

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

/// Checks a recording whose dropped frames were padded (`--pad-overruns`): every frame of
/// `decoded` is `signal`'s frame at that moment or silence, and the frames silenced account for
/// the `dropped` ones (a dropped frame that was silent in the input reads the same either way).
func expectInputOrSilence(_ decoded: [Int32], of signal: TestSignal, dropped: Int,
                          sourceLocation: SourceLocation = #_sourceLocation) {
    let channels = signal.format.channels
    var silencedFrames = 0, wrongFrames = 0, silentInputFrames = 0
    for frame in 0..<min(decoded.count, signal.samples.count) / channels {
        let got = decoded[(frame * channels)..<((frame + 1) * channels)]
        let sent = signal.samples[(frame * channels)..<((frame + 1) * channels)]
        let isSilentInput = sent.allSatisfy { $0 == 0 }
        if isSilentInput { silentInputFrames += 1 }
        if got.elementsEqual(sent) { continue }
        if got.allSatisfy({ $0 == 0 }) { silencedFrames += 1 } else { wrongFrames += 1 }
    }
    #expect(wrongFrames == 0 && silencedFrames <= dropped && dropped - silencedFrames <= silentInputFrames,
            "\(wrongFrames) frames neither the input's nor silence; \(silencedFrames) silenced for \(dropped) dropped",
            sourceLocation: sourceLocation)
}

/// Checks a recording whose dropped frames were left out (no `--pad-overruns`): every frame of
/// `decoded` is one of `signal`'s, in the input's order, and at most `dropped` input frames were
/// skipped before the last one decoded (the rest were dropped at the end). Matched greedily, the
/// earliest input frame equal to each decoded one: any ordered subsequence of the input passes,
/// and a frame the input does not have after the last match (stale or wrong audio) fails.
func expectInputInOrder(_ decoded: [Int32], of signal: TestSignal, dropped: Int,
                        sourceLocation: SourceLocation = #_sourceLocation) {
    let channels = signal.format.channels
    var next = 0  // the input frame the next decoded one is looked for from
    for frame in 0..<decoded.count / channels {
        let got = decoded[(frame * channels)..<((frame + 1) * channels)]
        while next < signal.frames, !signal.samples[(next * channels)..<((next + 1) * channels)].elementsEqual(got) { next += 1 }
        guard next < signal.frames else {
            Issue.record("decoded frame \(frame) is not the input's after the frames before it", sourceLocation: sourceLocation)
            return
        }
        next += 1
    }
    let skipped = next - decoded.count / channels
    #expect(skipped <= dropped, "\(skipped) input frames skipped for \(dropped) dropped", sourceLocation: sourceLocation)
}
