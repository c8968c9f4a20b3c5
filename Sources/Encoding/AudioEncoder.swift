/// A real-time encoder: takes interleaved frames in the capture format, writes a finished stream.
///
/// `encode` runs on the encoder thread once per drained ring region and must not allocate;
/// `finish` runs once, after the ring is drained.
public protocol AudioEncoder: AnyObject {
    /// Encodes `frames`, a whole number of interleaved frames in the capture format.
    func encode(_ frames: UnsafeRawBufferPointer) throws(EncoderError)
    /// Flushes everything and finalizes the stream (for a seekable file, rewrites its header).
    func finish() throws(EncoderError)
    /// After a write failed (disk full, file too large), leaves the file valid up to the failure
    /// as far as that can be done in place: no torn data at its end, headers telling the truth.
    func salvageAfterWriteFailure()
    /// Bytes of output written so far. Encoder thread only (others read the encoder loop's copy).
    var bytesWritten: Int { get }
    /// The frames of audio the output holds as it stands, when the codec can tell exactly (its
    /// writes carry whole frames: FLAC, WAV, raw); nil when it cannot (libopusenc holds audio back
    /// and writes pages). After a failure and its salvage, this is what the summary and the access
    /// log count, not the frames drained before it. Encoder thread only.
    var framesHeld: Int? { get }
    /// The most output one input frame can ever cost, when the codec bounds it below its raw size
    /// (`--max-size` uses it to come close to a limit without passing it); nil when it does not.
    var maximumBytesPerFrame: Double? { get }
    /// The most `finish` can still write beyond the frames it has not written yet
    /// (`framesAwaitingOutput`), when the codec knows it (WAV: a pad byte; raw: nothing; Ogg Opus:
    /// the packets that pad its end); nil for codecs that buffer audio and flush it at the end
    /// without saying how much (`--max-size` then keeps a reserve for that flush).
    var maximumFinishBytes: Int? { get }
    /// Frames given to `encode` that are not in the output yet, where the codec tracks them
    /// (libopusenc holds its packets until a page is due: up to `--max-delay`); 0 where the reserve
    /// of a nil `maximumFinishBytes` covers what the codec holds (libFLAC, a block). Encoder thread
    /// only; real-time safe.
    var framesAwaitingOutput: Int { get }
    /// Bytes a header may add before the next frames are written: a file that starts with them
    /// (a split, a sound-activated recording's next file) begins with its header. 0 for one stream.
    var headerBytesAhead: Int { get }
    /// How many of the next frames may be encoded with at most one file starting among them (the
    /// one header `headerBytesAhead` keeps in reserve); nil for no bound (one stream). Encoder
    /// thread only; real-time safe.
    var framesBeforeSecondFileStart: Int? { get }
}

extension AudioEncoder {
    public var framesHeld: Int? { nil }
    public var maximumBytesPerFrame: Double? { nil }
    public var maximumFinishBytes: Int? { nil }
    public var framesAwaitingOutput: Int { 0 }
    public var headerBytesAhead: Int { 0 }
    public var framesBeforeSecondFileStart: Int? { nil }
}

/// Why an encoder stopped. Each case names a user-visible problem.
public enum EncoderError: Error, Equatable, CustomStringConvertible {
    /// Writing the output failed with this errno (disk full, file too large, reader gone).
    case writeFailed(errno: Int32)
    /// The codec library refused a setting or failed; the text is the library's own.
    case libraryFailed(String)
    /// `--verify` decoded a frame that differs from its input.
    case verificationFailed
    /// A split recording could not create its next file; the text says which and why.
    case cannotStartNextFile(String)

    public var description: String {
        switch self {
        case .writeFailed(let code): "cannot write the output: \(OutputErrorText.describe(errno: code))"
        case .libraryFailed(let reason): "encoder failed: \(reason)"
        case .verificationFailed: "verification failed: the encoded audio does not decode to its input"
        case .cannotStartNextFile(let reason): reason
        }
    }
}
