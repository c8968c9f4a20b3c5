/// The shape of an interleaved PCM stream: sample format, channel count and frame rate.
///
/// A *frame* is one sample for every channel; all sizes in hark's hot path count frames.
public struct PCMFormat: Sendable, Hashable, CustomStringConvertible {
    public var sampleFormat: SampleFormat
    public var channels: Int
    public var sampleRate: Int

    public init(sampleFormat: SampleFormat, channels: Int, sampleRate: Int) {
        self.sampleFormat = sampleFormat
        self.channels = channels
        self.sampleRate = sampleRate
    }

    /// The rates hark records at (`-r`): 1 kHz to 768 kHz.
    public static let recordableRates = 1_000...768_000
    /// The channel counts hark records (`-c`).
    public static let recordableChannels = 1...8

    /// Bytes one interleaved frame occupies.
    public var bytesPerFrame: Int { sampleFormat.bytesPerSample * channels }

    /// Frames covering `seconds` of audio, rounded to the nearest frame.
    public func frames(forSeconds seconds: Double) -> Int {
        Int((seconds * Double(sampleRate)).rounded())
    }

    /// Seconds of audio in `frames` frames.
    public func seconds(forFrames frames: Int) -> Double {
        Double(frames) / Double(sampleRate)
    }

    public var description: String {
        "\(sampleFormat.alsaName), \(channels) ch, \(sampleRate) Hz"
    }
}
