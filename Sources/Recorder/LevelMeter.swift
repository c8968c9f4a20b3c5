import AudioFormat
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Per-channel peak and RMS levels and a clip count, measured on the encoder thread and read by
/// the status line on the session thread. Never on the capture thread: it only moves frames.
///
/// The encoder thread measures each region it drains (`measure`) into scratch space the meter
/// owns, then publishes the region's figures into atomics: the peak with `max`, the sum of squares
/// and the counts with `add`. The reader takes a window's figures with `exchange(0)`, which also
/// starts the next window. All relaxed: the figures carry no other data with them, and a region
/// whose peak lands in one window and its sum in the next only blurs the meter for a tenth of a
/// second. Allocation happens in `init` only.
///
/// Levels are measured at 16-bit resolution (a 96 dB range, more than a terminal bar shows): each
/// sample's magnitude is scaled to 0...32768, so a square fits 31 bits and a window of several
/// seconds of squares fits 64.
public final class LevelMeter: @unchecked Sendable {
    public let format: PCMFormat
    /// Per channel: [peak, sum of squares]; then the clip count and the frames measured.
    private let published: UnsafeMutablePointer<Atomic<Int>>
    /// The encoder thread's per-region scratch: [peak, sum of squares] per channel.
    private let scratch: UnsafeMutablePointer<Int>
    private var slotCount: Int { 2 * format.channels + 2 }

    public init(format: PCMFormat) {
        self.format = format
        let slots = 2 * format.channels + 2
        published = .allocate(capacity: slots)
        for slot in 0..<slots { (published + slot).initialize(to: Atomic(0)) }
        scratch = .allocate(capacity: 2 * format.channels)
    }

    deinit {
        published.deinitialize(count: slotCount)
        published.deallocate()
        scratch.deallocate()
    }

    /// Measures interleaved frames in the capture format. Encoder thread only; allocates nothing.
    public func measure(_ frames: UnsafeRawBufferPointer) {
        let channels = format.channels
        let sampleCount = frames.count / format.sampleFormat.bytesPerSample
        guard sampleCount > 0 else { return }
        scratch.update(repeating: 0, count: 2 * channels)
        var clips = 0
        var channel = 0
        for index in 0..<sampleCount {
            let (magnitude, clipped) = Self.magnitude(of: index, in: frames, format: format.sampleFormat)
            if clipped { clips += 1 }
            if magnitude > scratch[2 * channel] { scratch[2 * channel] = magnitude }
            scratch[2 * channel + 1] &+= magnitude * magnitude
            channel += 1
            if channel == channels { channel = 0 }
        }
        for channel in 0..<channels {
            published[2 * channel].max(scratch[2 * channel], ordering: .relaxed)
            published[2 * channel + 1].wrappingAdd(scratch[2 * channel + 1], ordering: .relaxed)
        }
        published[2 * channels].wrappingAdd(clips, ordering: .relaxed)
        published[2 * channels + 1].wrappingAdd(sampleCount / channels, ordering: .relaxed)
    }

    /// Takes the levels measured since the last call and starts a new window. Any one thread.
    /// Nil when nothing was measured in between.
    public func takeWindow() -> LevelWindow? {
        let channels = format.channels
        let frames = published[2 * channels + 1].exchange(0, ordering: .relaxed)
        let clips = published[2 * channels].exchange(0, ordering: .relaxed)
        var levels: [ChannelLevel] = []
        for channel in 0..<channels {
            let peak = published[2 * channel].exchange(0, ordering: .relaxed)
            let squares = published[2 * channel + 1].exchange(0, ordering: .relaxed)
            levels.append(ChannelLevel(peak: Double(peak) / 32768,
                                       rms: frames > 0 ? (Double(squares) / Double(frames)).squareRoot() / 32768 : 0))
        }
        return frames > 0 ? LevelWindow(channels: levels, clippedSamples: clips) : nil
    }

    /// One sample's magnitude on a 0...32768 scale, and whether it is at full scale (clipped): the
    /// largest positive value or beyond, in either direction.
    @inline(__always)
    static func magnitude(of index: Int, in frames: UnsafeRawBufferPointer, format: SampleFormat) -> (Int, Bool) {
        switch format {
        case .s16LE:
            let value = Int(Int16(littleEndian: frames.loadUnaligned(fromByteOffset: 2 * index, as: Int16.self)))
            return (abs(value), abs(value) >= 32767)
        case .s24LE:
            // 24 significant bits in the low three bytes; the top byte is ignored, as on input.
            let raw = UInt32(littleEndian: frames.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self))
            let value = Int(Int32(bitPattern: raw << 8) >> 8)
            return (abs(value) >> 8, abs(value) >= 8_388_607)
        case .s32LE:
            let value = Int(Int32(littleEndian: frames.loadUnaligned(fromByteOffset: 4 * index, as: Int32.self)))
            return (abs(value) >> 16, abs(value) >= 2_147_483_647)
        case .floatLE:
            let bits = UInt32(littleEndian: frames.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self))
            let value = Float(bitPattern: bits)
            guard value.isFinite else { return (32768, true) }
            let magnitude = min(abs(value), 1)
            return (Int(magnitude * 32768), abs(value) >= 1)
        }
    }
}

/// A channel's levels over a window, as fractions of full scale.
public struct ChannelLevel: Sendable, Equatable {
    public let peak: Double
    public let rms: Double

    public init(peak: Double, rms: Double) {
        self.peak = peak
        self.rms = rms
    }

    /// Decibels relative to full scale; -inf for silence.
    public static func dBFS(_ level: Double) -> Double {
        level > 0 ? 20 * log10(level) : -.infinity
    }
}

/// The levels of one window (about a tenth of a second of status line).
public struct LevelWindow: Sendable, Equatable {
    public let channels: [ChannelLevel]
    /// Samples at full scale (any channel).
    public let clippedSamples: Int

    public init(channels: [ChannelLevel], clippedSamples: Int) {
        self.channels = channels
        self.clippedSamples = clippedSamples
    }
}
