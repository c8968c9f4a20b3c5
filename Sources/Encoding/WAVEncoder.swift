import AudioFormat
#if canImport(Glibc)
import Glibc
#endif

/// Writes uncompressed WAV that survives a crash: the header's sizes are rewritten at least once a
/// second while recording (a `pwrite` of the header, from the encoder thread), so a recorder killed
/// with SIGKILL or a power cut leaves a file whose header covers all but the last second at most;
/// `finish` sets the exact sizes. Past 4 GiB the same rewrite makes the file RF64 (`WAVHeader`).
///
/// To a pipe the sizes cannot be rewritten: the header says "unknown" (0xFFFFFFFF), which readers
/// such as ffmpeg and sox take as "read to the end of the stream".
///
/// `encode` converts into a preallocated buffer when it must (S24_LE's 4-byte containers packed to
/// 3 bytes; channels put in WAVE order when the layout is known and the device's differs), else
/// writes the samples as they come; it allocates nothing.
public final class WAVEncoder: AudioEncoder {
    private let sink: OutputSink
    private var header: WAVHeader
    /// Where the header starts: stdout redirected to a file may already hold other output.
    private let headerOffset: Int
    private let inputBytesPerFrame: Int
    private let packed: UnsafeMutableRawPointer?
    private let packedFrames: Int
    private let inputBytesPerSample: Int
    /// Into WAVE order (the channel mask's bit order), when that differs from the device's.
    private let reorder: ChannelReorder?
    private var dataBytes = 0
    private var lastHeaderUpdate: Int64
    /// How often the sizes are rewritten while recording: the most a killed recording's header can
    /// lag behind its data.
    private let headerUpdateNanoseconds: Int64

    public var bytesWritten: Int { sink.bytesWritten }
    public var maximumBytesPerFrame: Double? { Double(header.blockAlign) }
    /// The pad byte after a data chunk of odd size; the header is rewritten in place.
    public var maximumFinishBytes: Int? { 1 }

    /// Writes the header at once (sizes unknown until the first update). Not real-time safe.
    /// `layout` says which speaker each channel is, when known: the channel mask then names those
    /// speakers and the channels are stored in the mask's order; else WAVE's default for the count.
    public init(format: PCMFormat, tags: StreamTags, sink: OutputSink, conversionFrames: Int = 4096,
                headerUpdateNanoseconds: Int64 = 1_000_000_000, layout: ChannelLayout? = nil) throws(EncoderError) {
        self.sink = sink
        self.headerUpdateNanoseconds = headerUpdateNanoseconds
        header = WAVHeader(format: format, tags: tags, channelMask: layout?.waveMask)
        inputBytesPerFrame = format.bytesPerFrame
        inputBytesPerSample = format.sampleFormat.bytesPerSample
        reorder = ChannelReorder(layout?.waveOrder)
        packedFrames = conversionFrames
        packed = format.sampleFormat == .s24LE || reorder != nil
            ? UnsafeMutableRawPointer.allocate(byteCount: conversionFrames * header.blockAlign, alignment: 4) : nil
        lastHeaderUpdate = Self.now()
        headerOffset = sink.currentOffset
        let written = header.bytes.withUnsafeBytes { sink.write($0) }
        guard written else { throw .writeFailed(errno: sink.failure ?? EIO) }
    }

    deinit { packed?.deallocate() }

    public func encode(_ frames: UnsafeRawBufferPointer) throws(EncoderError) {
        if let packed {
            let channels = header.channels
            let outputBytesPerSample = header.encoding.bytesPerSample
            var offset = 0
            while offset < frames.count {
                let count = min(packedFrames, (frames.count - offset) / inputBytesPerFrame)
                let source = frames.baseAddress! + offset
                for frame in 0..<count {
                    for channel in 0..<channels {
                        // Little-endian: a sample's low bytes come first, so S24_LE's three
                        // significant bytes are the first three of its 4-byte container.
                        let sourceChannel = reorder?.order[channel] ?? channel
                        (packed + (frame * channels + channel) * outputBytesPerSample)
                            .copyMemory(from: source + (frame * channels + sourceChannel) * inputBytesPerSample,
                                        byteCount: outputBytesPerSample)
                    }
                }
                try write(UnsafeRawBufferPointer(start: packed, count: count * header.blockAlign), frames: count)
                offset += count * inputBytesPerFrame
            }
        } else {
            try write(frames, frames: frames.count / inputBytesPerFrame)
        }
        if sink.isSeekable, Self.now() - lastHeaderUpdate >= headerUpdateNanoseconds {
            lastHeaderUpdate = Self.now()
            rewriteHeader(padding: 0)
        }
    }

    private func write(_ bytes: UnsafeRawBufferPointer, frames: Int) throws(EncoderError) {
        guard sink.write(bytes, frames: frames) else { throw .writeFailed(errno: sink.failure ?? EIO) }
        dataBytes += bytes.count
    }

    /// The exact sizes, and the pad byte a data chunk of odd size ends with (RIFF's rule).
    public func finish() throws(EncoderError) {
        let padding = dataBytes % 2
        if padding == 1 {
            let zero: UInt8 = 0
            let written = withUnsafeBytes(of: zero) { sink.write($0) }
            guard written else { throw .writeFailed(errno: sink.failure ?? EIO) }
        }
        guard sink.isSeekable else { return }
        guard rewriteHeader(padding: padding) else { throw .writeFailed(errno: errno) }
    }

    /// Cuts a torn write off the end and makes the header tell the truth about what is left.
    public func salvageAfterWriteFailure() {
        // Every write is whole frames and `dataBytes` counts only completed ones, so after the cut
        // the file ends on a frame and the header can say exactly how many.
        guard sink.truncateToLastCompleteWrite() else { return }
        rewriteHeader(padding: 0)
    }

    @discardableResult
    private func rewriteHeader(padding: Int) -> Bool {
        header.update(dataBytes: dataBytes, padding: padding)
        return sink.overwrite(header.bytes, at: headerOffset)
    }

    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
