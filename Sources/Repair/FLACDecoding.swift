import CFLAC

/// Decodes a FLAC stream with libFLAC's stream decoder, for what a repair needs to know: how many
/// samples the frames hold, their MD5 (as STREAMINFO records it), and whether libFLAC found
/// anything wrong. The bytes come from a closure, so a plan can be decoded before it is written.
/// Not real-time code: it allocates per frame.
enum FLACDecoding {
    struct Result {
        var samples: UInt64 = 0
        var md5 = [UInt8](repeating: 0, count: 16)
        /// libFLAC's complaints (lost sync, bad header, CRC mismatch), in order.
        var errors: [String] = []
        /// False when STREAMINFO holds an MD5 and the audio's differs (checked only if asked, and
        /// then `md5` is not computed).
        var md5Matches = true
        /// Whether `shouldStop` ended the decoding early (a stop signal is pending).
        var interrupted = false
    }

    /// Decodes `length` bytes that `read` supplies (the range wanted, and where to put it), asking
    /// `shouldStop` every 16 frames (a Ctrl-C is then taken within a fraction of a second, not at
    /// the end of a file of gigabytes). The corresponding C functions are
    /// `FLAC__stream_decoder_init_stream`, `…_process_until_end_of_stream` and `…_finish`.
    static func decode(length: Int, checkMD5: Bool, shouldStop: @escaping () -> Bool = { false },
                       read: @escaping (Range<Int>, UnsafeMutableRawBufferPointer) -> Void) -> Result? {
        guard let decoder = FLAC__stream_decoder_new() else { return nil }
        defer { FLAC__stream_decoder_delete(decoder) }
        FLAC__stream_decoder_set_md5_checking(decoder, checkMD5 ? 1 : 0)
        // libFLAC checks the MD5 in C when asked; the MD5 is computed here only when it is wanted.
        let context = DecodingContext(length: length, computesMD5: !checkMD5, read: read)
        context.shouldStop = shouldStop
        let client = Unmanaged.passUnretained(context).toOpaque()
        // Every metadata block parsed, not only STREAMINFO: a tag or picture block whose lengths
        // run past it is then an error here, as it is for `flac -t` and players that read tags.
        FLAC__stream_decoder_set_metadata_respond_all(decoder)
        let status = FLAC__stream_decoder_init_stream(decoder, readCallback, nil, nil, nil, nil, writeCallback, metadataCallback,
                                                      errorCallback, client)
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else { return nil }
        let processed = FLAC__stream_decoder_process_until_end_of_stream(decoder) != 0
        let matches = FLAC__stream_decoder_finish(decoder) != 0
        withExtendedLifetime(context) {}
        var result = Result()
        result.samples = context.samples
        result.md5 = context.md5.digest()
        result.errors = context.errors
        if !processed { result.errors.append("decoding stopped early") }
        result.md5Matches = matches
        result.interrupted = context.interrupted
        return result
    }
}

private final class DecodingContext {
    let length: Int
    let read: (Range<Int>, UnsafeMutableRawBufferPointer) -> Void
    var position = 0
    var samples: UInt64 = 0
    var md5 = MD5()
    var errors: [String] = []
    /// Reused for each frame's samples in MD5 layout; grows to the largest frame.
    var sampleBytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 0, alignment: 8)

    let computesMD5: Bool
    var shouldStop: () -> Bool = { false }
    var interrupted = false

    init(length: Int, computesMD5: Bool, read: @escaping (Range<Int>, UnsafeMutableRawBufferPointer) -> Void) {
        self.length = length
        self.computesMD5 = computesMD5
        self.read = read
    }

    deinit { sampleBytes.deallocate() }
}

private let readCallback: FLAC__StreamDecoderReadCallback = { _, buffer, bytes, client in
    let context = Unmanaged<DecodingContext>.fromOpaque(client!).takeUnretainedValue()
    let count = min(bytes!.pointee, context.length - context.position)
    guard count > 0 else {
        bytes!.pointee = 0
        return FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM
    }
    context.read(context.position..<(context.position + count), UnsafeMutableRawBufferPointer(start: buffer, count: count))
    context.position += count
    bytes!.pointee = count
    return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE
}

/// Adds the frame's samples to the MD5 as STREAMINFO's signature takes them: interleaved, each a
/// little-endian signed integer of (bits + 7) / 8 bytes.
private let writeCallback: FLAC__StreamDecoderWriteCallback = { _, frame, buffer, client in
    let context = Unmanaged<DecodingContext>.fromOpaque(client!).takeUnretainedValue()
    let header = frame!.pointee.header
    context.samples += UInt64(header.blocksize)
    if context.samples / UInt64(max(1, header.blocksize)) % 16 == 0, context.shouldStop() {
        context.interrupted = true
        return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
    }
    guard context.computesMD5 else { return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE }
    let blockSize = Int(header.blocksize), channels = Int(header.channels)
    let width = (Int(header.bits_per_sample) + 7) / 8
    let needed = blockSize * channels * width
    if context.sampleBytes.count < needed {
        context.sampleBytes.deallocate()
        context.sampleBytes = .allocate(byteCount: needed, alignment: 8)
    }
    let output = context.sampleBytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
    var position = 0
    for index in 0..<blockSize {
        for channel in 0..<channels {
            let sample = UInt32(bitPattern: buffer![channel]![index])
            for byte in 0..<width { output[position &+ byte] = UInt8(truncatingIfNeeded: sample >> UInt32(8 &* byte)) }
            position &+= width
        }
    }
    context.md5.update(UnsafeRawBufferPointer(start: context.sampleBytes.baseAddress, count: needed))
    return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
}

/// Nothing to take from the blocks: asking for them is what makes libFLAC parse and check them.
private let metadataCallback: FLAC__StreamDecoderMetadataCallback = { _, _, _ in }

private let errorCallback: FLAC__StreamDecoderErrorCallback = { _, status, client in
    let context = Unmanaged<DecodingContext>.fromOpaque(client!).takeUnretainedValue()
    let text: String = switch status {
    case FLAC__STREAM_DECODER_ERROR_STATUS_LOST_SYNC: "lost sync"
    case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER: "bad frame header"
    case FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH: "frame CRC mismatch"
    case FLAC__STREAM_DECODER_ERROR_STATUS_UNPARSEABLE_STREAM: "unparseable stream"
    case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_METADATA: "a metadata block libFLAC rejects"
    default: "decoder error \(status.rawValue)"
    }
    context.errors.append(text)
}
