import AudioFormat
#if canImport(Glibc)
import Glibc
#endif

/// Writes uncompressed WAV that survives a crash: the header's sizes are rewritten after every
/// half second of audio (a `pwrite` of the header, from the encoder thread), and a region longer
/// than that is written in pieces with a rewrite between them. Invariant: the data beyond what the
/// header counts is less than half a second of audio, however late the encoder runs; with the
/// encoder's batches of at most half a second, a recorder killed with SIGKILL or a power cut leaves
/// a file whose header covers all but the last second at most.
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
    /// How often, in frames of audio, the sizes are rewritten while recording: the most a killed
    /// recording's header can lag behind its data.
    private let headerUpdateFrames: Int
    /// Frames written since the header was last rewritten; below `headerUpdateFrames` between calls.
    private var framesSinceHeader = 0
    /// Whether the write that failed carried audio frames (not the header or the pad byte): then
    /// the frames of it that fitted are kept.
    private var failedWriteCarriedFrames = false

    public var bytesWritten: Int { sink.bytesWritten }
    public var framesHeld: Int? { sink.framesInCompleteWrites }
    public var maximumBytesPerFrame: Double? { Double(header.blockAlign) }
    /// The pad byte after a data chunk of odd size; the header is rewritten in place.
    public var maximumFinishBytes: Int? { 1 }

    /// Writes the header at once (sizes unknown until the first update). Not real-time safe.
    /// `layout` says which speaker each channel is, when known: the channel mask then names those
    /// speakers and the channels are stored in the mask's order; else WAVE's default for the count.
    public init(format: PCMFormat, tags: StreamTags, sink: OutputSink, conversionFrames: Int = 4096,
                headerUpdateFrames: Int? = nil, layout: ChannelLayout? = nil, broadcastExtension: Bool = false) throws(EncoderError) {
        self.sink = sink
        self.headerUpdateFrames = max(1, headerUpdateFrames ?? format.sampleRate / 2)
        header = WAVHeader(format: format, tags: tags, channelMask: layout?.waveMask, broadcastExtension: broadcastExtension)
        inputBytesPerFrame = format.bytesPerFrame
        inputBytesPerSample = format.sampleFormat.bytesPerSample
        reorder = ChannelReorder(layout?.waveOrder)
        packedFrames = conversionFrames
        packed = format.sampleFormat == .s24LE || reorder != nil
            ? UnsafeMutableRawPointer.allocate(byteCount: conversionFrames * header.blockAlign, alignment: 4) : nil
        headerOffset = sink.currentOffset
        let written = header.bytes.withUnsafeBytes { sink.write($0) }
        guard written else { throw .writeFailed(errno: sink.failure ?? EIO) }
    }

    deinit { packed?.deallocate() }

    public func encode(_ frames: UnsafeRawBufferPointer) throws(EncoderError) {
        var offset = 0
        while offset < frames.count {
            let count = min((frames.count - offset) / inputBytesPerFrame, headerUpdateFrames - framesSinceHeader)
            guard count > 0 else { break }  // only whole frames arrive; a torn one is no audio
            try writeFrames(UnsafeRawBufferPointer(rebasing: frames[offset..<(offset + count * inputBytesPerFrame)]))
            offset += count * inputBytesPerFrame
            framesSinceHeader += count
            if framesSinceHeader >= headerUpdateFrames {
                framesSinceHeader = 0
                if sink.isSeekable { rewriteHeader(padding: 0) }
            }
        }
    }

    /// Writes whole frames in the file's layout: packed and reordered through the preallocated
    /// buffer when needed, else as they come.
    private func writeFrames(_ frames: UnsafeRawBufferPointer) throws(EncoderError) {
        guard let packed else {
            try write(frames, frames: frames.count / inputBytesPerFrame)
            return
        }
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
    }

    private func write(_ bytes: UnsafeRawBufferPointer, frames: Int) throws(EncoderError) {
        guard sink.write(bytes, frames: frames) else {
            failedWriteCarriedFrames = true
            throw .writeFailed(errno: sink.failure ?? EIO)
        }
        dataBytes += bytes.count
    }

    /// The exact sizes, and the pad byte a data chunk of odd size ends with (RIFF's rule). Not on
    /// a pipe: a stream whose sizes say "unknown" is read to its end, and its readers took the
    /// pad byte for audio (ffmpeg and sox reported one stray byte).
    public func finish() throws(EncoderError) {
        let padding = sink.isSeekable ? dataBytes % 2 : 0
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
        // Every write of audio is whole frames and `dataBytes` counts only completed ones; of the
        // write that failed, the whole frames that reached the file are kept. So after the cut the
        // file ends on a frame and the header can say exactly how many.
        if failedWriteCarriedFrames {
            guard let kept = sink.truncateToWholeFramesOfFailedWrite(bytesPerFrame: header.blockAlign, evenAfter: dataBytes) else { return }
            dataBytes += kept * header.blockAlign
        } else {
            guard sink.truncateToLastCompleteWrite() else { return }
        }
        rewriteHeader(padding: 0)
    }

    @discardableResult
    private func rewriteHeader(padding: Int) -> Bool {
        header.update(dataBytes: dataBytes, padding: padding)
        return sink.overwrite(header.bytes, at: headerOffset)
    }
}
