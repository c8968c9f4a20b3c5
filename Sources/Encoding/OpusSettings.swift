/// Settings a user can choose for Ogg Opus output, named after opusenc's options.
public struct OpusSettings: Sendable, Equatable {
    public enum BitrateMode: String, Sendable, CaseIterable {
        /// Unconstrained variable bitrate (opusenc's default).
        case vbr
        /// Constrained VBR: bitrate varies within one frame's worth of a CBR buffer.
        case constrainedVBR = "cvbr"
        /// Every packet the same size.
        case hardCBR = "hard-cbr"
    }

    public enum Application: String, Sendable, CaseIterable {
        /// Best for music and mixed content.
        case audio
        /// Best for speech.
        case voip
        /// Lowest delay: no speech mode.
        case lowdelay
    }

    /// Target bitrate in kb/s; nil picks opusenc's default for the channels and rate (64 kb/s mono,
    /// 96 kb/s stereo at 44.1 kHz and above).
    public var bitrateKbps: Double?
    public var bitrateMode: BitrateMode
    /// Encoder complexity 0 (fastest) to 10 (best).
    public var complexity: Int
    /// Frame duration in milliseconds: 2.5, 5, 10, 20, 40 or 60.
    public var frameMilliseconds: Double
    public var application: Application
    /// Longest time audio may wait in the Ogg muxer before its page is written, in milliseconds.
    ///
    /// 200 ms by default, below opusenc's 1000 ms: a pipe reader gets the first audio page about
    /// 310 ms after the command starts (210 ms at 100; docs/performance.md: `latency-probe ogg hark
    /// record -q -D pacedcap --format opus [--max-delay 100] -o -`), each later page at most this
    /// delay plus a capture period after its first audio, and a killed recorder loses only the
    /// page not yet written and the period being captured. The price is a 27-byte page header
    /// five times a second instead of once: 0.8% of a 128 kb/s stream instead of 0.2%. 0 writes
    /// every packet on its own page.
    public var maxDelayMilliseconds: Int
    /// OpusTags' tags, written as given (the recorder adds ENCODER and the rest).
    public var tags: StreamTags

    /// opusenc's default bitrate: 64 kb/s per Opus stream and 32 more per coupled (two-channel)
    /// one, scaled down below 44.1 kHz: 64 mono, 96 stereo, 320 for 5.1, 416 for 7.1.
    public static func defaultBitrateKbps(channels: Int, sampleRate: Int) -> Double {
        let (streams, coupled) = streamCounts(channels: channels)
        let rateFactor = min(48, max(8, ((sampleRate < 44_100 ? sampleRate : 48_000) + 1_000) / 1_000)) + 16
        return Double(((64_000 * streams + 32_000 * coupled) * rateFactor + 32) >> 6) / 1000
    }

    /// How `channels` are split into Opus streams: one mono stream, one coupled stereo stream,
    /// and for 3–8 channels RFC 7845's Vorbis-order mapping as libopus lays it out (5.1: 4 streams,
    /// 2 of them coupled, for FL+FR and RL+RR).
    public static func streamCounts(channels: Int) -> (streams: Int, coupled: Int) {
        precondition((1...8).contains(channels), "Opus carries 1 to 8 channels")
        let table = [(1, 0), (1, 1), (2, 1), (2, 2), (3, 2), (4, 2), (5, 2), (5, 3)]
        return table[channels - 1]
    }

    public static let bitrateRangeKbps: ClosedRange<Double> = 6...512
    public static let complexities = 0...10
    public static let frameDurations: [Double] = [2.5, 5, 10, 20, 40, 60]
    public static let maxDelayRangeMilliseconds = 0...1000

    public init(
        bitrateKbps: Double? = nil, bitrateMode: BitrateMode = .vbr, complexity: Int = 10,
        frameMilliseconds: Double = 20, application: Application = .audio, maxDelayMilliseconds: Int = 200,
        tags: StreamTags = StreamTags()
    ) {
        self.bitrateKbps = bitrateKbps
        self.bitrateMode = bitrateMode
        self.complexity = complexity
        self.frameMilliseconds = frameMilliseconds
        self.application = application
        self.maxDelayMilliseconds = maxDelayMilliseconds
        self.tags = tags
    }
}
