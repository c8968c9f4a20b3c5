import AudioFormat
import CFLAC

/// Settings a user can choose for FLAC output.
public struct FLACSettings: Sendable, Equatable {
    /// libFLAC's compression presets, 0 (fastest) to 8 (smallest).
    public var compressionLevel: Int
    /// Decode every frame again inside the encoder and compare with the input.
    public var verify: Bool
    /// The VORBIS_COMMENT block's tags, written as given (the recorder adds ENCODER and the rest).
    public var tags: StreamTags

    public static let compressionLevels = 0...8

    public init(compressionLevel: Int = 5, verify: Bool = false, tags: StreamTags = StreamTags()) {
        self.compressionLevel = compressionLevel
        self.verify = verify
        self.tags = tags
    }
}

/// Encodes to FLAC with libFLAC's stream encoder, writing through an `OutputSink`.
///
/// For a seekable sink, libFLAC's seek and tell callbacks are installed, so `finish()` rewrites
/// STREAMINFO with the true total samples and the MD5 of the audio, and the stream carries a
/// SEEKTABLE reserved at init and filled in while encoding (`FLACSeekTable`: a point about every
/// 10 s). For a pipe they are not: the stream is valid, with no seek table, and its STREAMINFO
/// holds 0 (unknown) total samples.
///
/// `encode` converts into a preallocated `Int32` buffer and allocates nothing.
public final class FLACEncoder: AudioEncoder {
    private let encoder: UnsafeMutablePointer<FLAC__StreamEncoder>
    /// Read by libFLAC's callbacks below (this file), which receive the encoder as client data.
    fileprivate let sink: OutputSink
    /// Where the stream's "fLaC" starts in the output: standard output redirected to a file may
    /// hold another program's output before it.
    private let streamStart: Int
    public var bytesWritten: Int { sink.bytesWritten }
    /// The seek table being filled in, for a seekable sink; nil for a pipe.
    fileprivate let seekTable: FLACSeekTable?
    private let sampleFormat: SampleFormat
    private let channels: Int
    private let bytesPerFrame: Int
    private let conversion: UnsafeMutablePointer<Int32>
    private let conversionFrames: Int
    /// Into WAVE order, when the channel layout is known and the device's order differs.
    private let reorder: ChannelReorder?
    /// The VORBIS_COMMENT block; libFLAC keeps only the pointer, so it lives as long as the encoder.
    private var commentBlock: UnsafeMutablePointer<FLAC__StreamMetadata>?

    /// Whether libFLAC decodes each frame again and compares (`--verify`), read back from it.
    /// The corresponding C function is `FLAC__stream_encoder_get_verify`.
    public var isVerifying: Bool { FLAC__stream_encoder_get_verify(encoder) != 0 }

    /// The block size and the highest LPC order the compression level set, read back from libFLAC.
    /// The corresponding C functions are `FLAC__stream_encoder_get_blocksize` and `…_get_max_lpc_order`.
    public var blockSize: Int { Int(FLAC__stream_encoder_get_blocksize(encoder)) }
    public var maxLPCOrder: Int { Int(FLAC__stream_encoder_get_max_lpc_order(encoder)) }

    /// Sets up libFLAC for `format` and writes the stream header.
    ///
    /// `expectedSeconds` (the recording's `-d`, if any) sizes a seekable output's seek table:
    /// a point every 10 s for that long, or for an hour when it is not known (see `FLACSeekTable`).
    /// `seekPointCapacity` overrides that size (tests).
    /// Not real-time safe. The corresponding C functions are `FLAC__stream_encoder_new`,
    /// `FLAC__stream_encoder_set_*` and `FLAC__stream_encoder_init_stream`.
    /// `layout` says which speaker each channel is, when known: the channels are then stored in
    /// FLAC's (WAVE's) order, and a layout other than FLAC's default for the count is named with a
    /// WAVEFORMATEXTENSIBLE_CHANNEL_MASK tag, as the flac tool does.
    public init(format: PCMFormat, settings: FLACSettings, sink: OutputSink,
                expectedSeconds: Double? = nil, seekPointCapacity: Int? = nil,
                conversionFrames: Int = 4096, layout: ChannelLayout? = nil) throws(EncoderError)
    {
        guard FLACSettings.compressionLevels.contains(settings.compressionLevel) else {
            throw .libraryFailed("compression level \(settings.compressionLevel) is outside 0–8")
        }
        guard let encoder = FLAC__stream_encoder_new() else { throw .libraryFailed("out of memory") }
        self.encoder = encoder
        self.sink = sink
        streamStart = sink.currentOffset
        self.sampleFormat = format.sampleFormat
        self.channels = format.channels
        self.bytesPerFrame = format.bytesPerFrame
        self.conversionFrames = conversionFrames
        conversion = .allocate(capacity: conversionFrames * format.channels)
        reorder = ChannelReorder(layout?.waveOrder)
        var settings = settings
        // As the flac tool does, for any channel count: mono that is not the centre and a pair that
        // is not FL,FR are named too (flac -d and ffmpeg read the tag for them).
        if let mask = layout?.waveMask, mask != WAVHeader.defaultChannelMask(channels: format.channels),
           !settings.tags.contains(key: "WAVEFORMATEXTENSIBLE_CHANNEL_MASK") {
            let digits = String(mask, radix: 16, uppercase: true)
            settings.tags.add("WAVEFORMATEXTENSIBLE_CHANNEL_MASK", "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits)
        }
        // A seek table needs the stream's offsets, so only a sink libFLAC can seek back in gets one.
        seekTable = sink.isSeekable
            ? FLACSeekTable(sampleRate: format.sampleRate, expectedSeconds: expectedSeconds, capacity: seekPointCapacity)
            : nil

        let bitsPerSample = format.sampleFormat.encodedBitsPerSample
        _ = FLAC__stream_encoder_set_channels(encoder, UInt32(format.channels))
        _ = FLAC__stream_encoder_set_bits_per_sample(encoder, UInt32(bitsPerSample))
        _ = FLAC__stream_encoder_set_sample_rate(encoder, UInt32(format.sampleRate))
        _ = FLAC__stream_encoder_set_compression_level(encoder, UInt32(settings.compressionLevel))
        _ = FLAC__stream_encoder_set_verify(encoder, settings.verify ? 1 : 0)
        // The streamable subset allows at most 24 bits per sample and 48 kHz-friendly block sizes;
        // 32-bit or unusual streams are valid FLAC outside it.
        let isSubset = bitsPerSample <= 24 && format.sampleRate <= 655_350 && format.channels <= 8
        _ = FLAC__stream_encoder_set_streamable_subset(encoder, isSubset ? 1 : 0)
        // No total-samples estimate, even when -d says how long: a stream that cannot be rewritten
        // would keep the promise after a stop signal or dropped frames cut it short, and decoders
        // reject a stream shorter than its STREAMINFO. 0 means "unknown" and is always true.

        // Always a block, even with no tags: its vendor string names libFLAC, as the reference
        // encoder's files do.
        commentBlock = Self.vorbisComment(settings.tags)
        // libFLAC copies this array of pointers, not the blocks: both live as long as the encoder.
        var blocks = [commentBlock, seekTable?.block].filter { $0 != nil }
        if !blocks.isEmpty {
            _ = FLAC__stream_encoder_set_metadata(encoder, &blocks, UInt32(blocks.count))
        }

        // The callbacks get the encoder unretained: libFLAC calls them only from this object's own
        // calls into it (init, encode, finish), while it is alive.
        let context = Unmanaged.passUnretained(self).toOpaque()
        let status = FLAC__stream_encoder_init_stream(
            encoder, flacWriteCallback,
            sink.isSeekable ? flacSeekCallback : nil,
            sink.isSeekable ? flacTellCallback : nil,
            nil, context)
        // Every stored property is set, so throwing from here on runs `deinit`, which frees both.
        guard status == FLAC__STREAM_ENCODER_INIT_STATUS_OK else {
            if let failure = sink.failure { throw .writeFailed(errno: failure) }
            throw .libraryFailed("cannot start the FLAC encoder (\(status.rawValue))")
        }
    }

    deinit {
        conversion.deallocate()
        FLAC__stream_encoder_delete(encoder)
        if let commentBlock { FLAC__metadata_object_delete(commentBlock) }
    }

    /// A VORBIS_COMMENT block holding `tags` in order. The corresponding C functions are
    /// `FLAC__metadata_object_new` and `FLAC__metadata_object_vorbiscomment_append_comment`.
    private static func vorbisComment(_ tags: StreamTags) -> UnsafeMutablePointer<FLAC__StreamMetadata>? {
        guard let block = FLAC__metadata_object_new(FLAC__METADATA_TYPE_VORBIS_COMMENT) else { return nil }
        for (key, value) in tags.entries {
            var entry = FLAC__StreamMetadata_VorbisComment_Entry()
            guard FLAC__metadata_object_vorbiscomment_entry_from_name_value_pair(&entry, key, value) != 0 else { continue }
            // copy = false: the block takes ownership of the entry's bytes.
            _ = FLAC__metadata_object_vorbiscomment_append_comment(block, entry, 0)
        }
        return block
    }

    /// The version of libFLAC in use, e.g. "1.4.2".
    public static var libraryVersion: String { String(cString: hark_flac_version()) }

    public func encode(_ frames: UnsafeRawBufferPointer) throws(EncoderError) {
        var frameOffset = 0
        let totalFrames = frames.count / bytesPerFrame
        while frameOffset < totalFrames {
            let chunk = min(conversionFrames, totalFrames - frameOffset)
            SampleConversion.toInt32(frames.baseAddress! + frameOffset * bytesPerFrame, format: sampleFormat,
                                     sampleCount: chunk * channels, into: conversion)
            reorder?.apply(conversion, frames: chunk)
            guard FLAC__stream_encoder_process_interleaved(encoder, conversion, UInt32(chunk)) != 0 else {
                throw currentError()
            }
            frameOffset += chunk
        }
    }

    public func finish() throws(EncoderError) {
        guard FLAC__stream_encoder_finish(encoder) != 0 else { throw currentError() }
        if let failure = sink.failure { throw .writeFailed(errno: failure) }
    }

    /// Frames in the FLAC frames written whole (libFLAC says how many each write carries).
    public var framesHeld: Int? { sink.framesInCompleteWrites }

    /// Cuts the file back to its last complete FLAC frame and rewrites STREAMINFO in place with the
    /// frames that are really there and an unset MD5 (libFLAC can no longer finish it), and the seek
    /// table with the points recorded so far: the file then decodes, tests and seeks clean up to the
    /// failure.
    public func salvageAfterWriteFailure() {
        // STREAMINFO's body starts at byte 8 of the stream ("fLaC" and a 4-byte block header); it
        // is whole once 42 bytes are out. Total samples: 36 bits from the low nibble of byte 21 to
        // byte 25; the MD5 follows in bytes 26–41.
        guard sink.truncateToLastCompleteWrite(), sink.currentOffset >= streamStart + 42,
              let byte21 = sink.read(at: streamStart + 21, count: 1)?.first else { return }
        let total = UInt64(sink.framesInCompleteWrites)
        var patch = [byte21 & 0xF0 | UInt8((total >> 32) & 0x0F)]
        patch += [UInt8(total >> 24 & 0xFF), UInt8(total >> 16 & 0xFF), UInt8(total >> 8 & 0xFF), UInt8(total & 0xFF)]
        patch += [UInt8](repeating: 0, count: 16)
        _ = sink.overwrite(patch, at: streamStart + 21)
        // On disk the table still holds init's placeholders: libFLAC rewrites it only in a finish()
        // that succeeds. Every recorded point names a frame whose write completed, and the file now
        // ends after the last such write, so none points past the end.
        if let seekTable, let offset = seekTable.pointsOffset {
            _ = sink.overwrite(seekTable.encodedPoints(), at: offset)
        }
    }

    private func currentError() -> EncoderError {
        if let failure = sink.failure { return .writeFailed(errno: failure) }
        let state = FLAC__stream_encoder_get_state(encoder)
        if state == FLAC__STREAM_ENCODER_VERIFY_MISMATCH_IN_AUDIO_DATA { return .verificationFailed }
        return .libraryFailed(String(cString: FLAC__stream_encoder_get_resolved_state_string(encoder)))
    }
}

// libFLAC's callbacks: C function pointers, so they capture nothing; the `FLACEncoder` arrives as
// client data.

private func flacWriteCallback(
    _ encoder: UnsafePointer<FLAC__StreamEncoder>?, _ buffer: UnsafePointer<FLAC__byte>?, _ bytes: Int,
    _ samples: UInt32, _ currentFrame: UInt32, _ context: UnsafeMutableRawPointer?
) -> FLAC__StreamEncoderWriteStatus {
    let owner = Unmanaged<FLACEncoder>.fromOpaque(context!).takeUnretainedValue()
    let data = UnsafeRawBufferPointer(start: buffer, count: bytes)
    let offset = owner.sink.currentOffset
    // `samples` is the frame count of an audio frame, and 0 for metadata.
    guard owner.sink.write(data, frames: Int(samples)) else { return FLAC__STREAM_ENCODER_WRITE_STATUS_FATAL_ERROR }
    owner.seekTable?.noteWrite(at: offset, frames: Int(samples), firstByte: data.first ?? 0)
    return FLAC__STREAM_ENCODER_WRITE_STATUS_OK
}

private func flacSeekCallback(
    _ encoder: UnsafePointer<FLAC__StreamEncoder>?, _ offset: FLAC__uint64, _ context: UnsafeMutableRawPointer?
) -> FLAC__StreamEncoderSeekStatus {
    let sink = Unmanaged<FLACEncoder>.fromOpaque(context!).takeUnretainedValue().sink
    return sink.seek(to: Int(offset)) ? FLAC__STREAM_ENCODER_SEEK_STATUS_OK : FLAC__STREAM_ENCODER_SEEK_STATUS_ERROR
}

private func flacTellCallback(
    _ encoder: UnsafePointer<FLAC__StreamEncoder>?, _ offset: UnsafeMutablePointer<FLAC__uint64>?,
    _ context: UnsafeMutableRawPointer?
) -> FLAC__StreamEncoderTellStatus {
    let sink = Unmanaged<FLACEncoder>.fromOpaque(context!).takeUnretainedValue().sink
    offset?.pointee = FLAC__uint64(sink.currentOffset)
    return FLAC__STREAM_ENCODER_TELL_STATUS_OK
}
