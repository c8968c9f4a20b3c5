import AudioFormat
import COpusEnc

/// Encodes to Ogg Opus (RFC 7845) with libopusenc, writing through an `OutputSink`.
///
/// libopusenc writes OpusHead (with the pre-skip from the encoder's lookahead and the input rate),
/// OpusTags, and pages whose granule positions count 48 kHz samples; `finish()` drains it, which
/// writes the last page with end trimming and the EOS flag, so decoders return exactly the samples
/// captured. Rates other than 48 kHz are resampled to 48 kHz by libopusenc's (speex) resampler.
///
/// S16 input goes to libopusenc as it lies in the ring; other formats are converted into a
/// preallocated float buffer. Neither path allocates per call on hark's side.
public final class OggOpusEncoder: AudioEncoder {
    private let encoder: OpaquePointer
    private let sink: OutputSink
    /// libopusenc's write callback's context (held here: the callback does not retain it).
    private let pages: OggPageWriter
    /// OpusHead's pre-skip: where the granule positions' count of audio starts.
    private var preSkip = 0
    public var bytesWritten: Int { sink.bytesWritten }
    /// The most one input frame can cost in the file: a packet's bound (`packetBytesBound`) over
    /// the input frames one packet of `frameMilliseconds` carries.
    public let maximumBytesPerFrame: Double?
    /// What `finish` can write beyond the frames awaiting output (`framesAwaitingOutput`, which
    /// already counts the encoder's lookahead): the packet being filled, padded out, the
    /// resampler's delay (under 2 ms, at rates other than 48 kHz), and the rounding of granule
    /// positions to input frames: three packets at the packet's bound, one or two more than needed.
    public let maximumFinishBytes: Int?
    private let sampleFormat: SampleFormat
    private let channels: Int
    /// RFC 7845's channel mapping family: 0 for one or two channels, 1 for 3–8.
    private let mappingFamily: Int
    /// Into Vorbis order, for mapping family 1 (3–8 channels).
    private let reorder: ChannelReorder?
    private let sampleRate: Int
    private let bytesPerFrame: Int
    private let conversion: UnsafeMutablePointer<Float>
    private let conversionFrames: Int
    /// The Ogg stream's serial number, chosen here so an empty stream can be ended without libopusenc.
    private let serialNumber = UInt32.random(in: 1...UInt32.max)
    /// Frames handed to libopusenc so far.
    private var framesWritten = 0
    /// Where the stream's first page (OpusHead) starts in the output.
    private let streamStart: Int
    /// The frames the file holds once a failed write was salvaged, from its last page's granule
    /// position; nil before (libopusenc holds audio back, so the frames given are all that is known).
    public private(set) var framesHeld: Int?

    /// Sets up libopusenc for `format` and writes the OpusHead and OpusTags pages at once, so a
    /// reader of stdout gets a valid stream start immediately.
    /// Not real-time safe. The corresponding C functions are `ope_encoder_create_callbacks`,
    /// `ope_encoder_ctl` and `ope_encoder_flush_header`.
    ///
    /// Three to eight channels use RFC 7845's mapping family 1, which wants them in Vorbis order:
    /// `layout` must say which speaker each channel is (from the device's channel map or
    /// `--channel-map`) and be one of family 1's layouts; the channels are reordered as they are
    /// converted. Two channels named FR,FL are swapped into family 0's left-right order.
    public init(format: PCMFormat, settings: OpusSettings, sink: OutputSink, conversionFrames: Int = 4096,
                layout: ChannelLayout? = nil) throws(EncoderError) {
        var family: Int32 = 0
        var reorder: ChannelReorder?
        if format.channels > 2 {
            guard (3...8).contains(format.channels), let order = layout?.vorbisOrder else {
                throw .libraryFailed("""
                    \(format.channels)-channel Opus needs to know which speaker each channel is (RFC 7845 mapping \
                    family 1), and \(layout.map { "\($0) is not one of its layouts" } ?? "the layout is unknown")
                    """)
            }
            family = 1
            reorder = ChannelReorder(order)
        } else if format.channels == 2 {
            // Family 0 is left then right: a device (or --channel-map) that says FR,FL is swapped
            // back, as WAV and FLAC put it in WAVE order.
            reorder = ChannelReorder(layout?.stereoOrder)
        }
        self.reorder = reorder
        try Self.validate(settings)
        guard let comments = ope_comments_create() else { throw .libraryFailed("out of memory") }
        defer { ope_comments_destroy(comments) }
        // OpusTags' vendor string is libopusenc's own ("libopus 1.3.1, libopusenc 0.2.1" here): not
        // ours to set.
        for (key, value) in settings.tags.entries { ope_comments_add(comments, key, value) }

        var callbacks = OpusEncCallbacks(write: opusWriteCallback, close: opusCloseCallback)
        var error: Int32 = 0
        let pages = OggPageWriter(sink: sink)
        let context = Unmanaged.passUnretained(pages).toOpaque()
        guard let created = ope_encoder_create_callbacks(
            &callbacks, context, comments, Int32(format.sampleRate), Int32(format.channels), family, &error) else {
            throw .libraryFailed("cannot start the Opus encoder: \(String(cString: ope_strerror(error)))")
        }
        encoder = created
        self.sink = sink
        self.pages = pages
        streamStart = sink.currentOffset
        sampleFormat = format.sampleFormat
        channels = format.channels
        mappingFamily = Int(family)
        sampleRate = format.sampleRate
        let packetBytes = Double(Self.packetBytesBound(streams: OpusSettings.streamCounts(channels: format.channels).streams,
                                                       frameMilliseconds: settings.frameMilliseconds))
        maximumBytesPerFrame = packetBytes / (settings.frameMilliseconds * Double(format.sampleRate) / 1000)
        maximumFinishBytes = Int(packetBytes) * 3
        bytesPerFrame = format.bytesPerFrame
        self.conversionFrames = conversionFrames
        conversion = .allocate(capacity: conversionFrames * format.channels)

        // From here every stored property is set, so a throw runs deinit, which frees both.
        try apply(settings)
        _ = hark_ope_set_int(encoder, OPE_SET_SERIALNO_REQUEST, Int32(bitPattern: serialNumber))
        guard ope_encoder_flush_header(encoder) == OPE_OK else { throw currentError(OPE_WRITE_FAIL) }
        if let failure = sink.failure { throw .writeFailed(errno: failure) }
        // libopusenc writes the encoder's lookahead as OpusHead's pre-skip (once the header is out,
        // it no longer changes).
        var lookahead: Int32 = 0
        _ = hark_ope_get_int(encoder, OPUS_GET_LOOKAHEAD_REQUEST, &lookahead)
        preSkip = Int(lookahead)
    }

    /// The frames given whose packets no page written holds yet: up to `--max-delay` and the
    /// packet being filled. A page's granule position counts the input libopusenc has encoded
    /// (48 kHz samples, from the stream's start); less the pre-skip, it counts what decodes, so
    /// this is up to the encoder's lookahead (312 samples) more than libopusenc holds, which
    /// covers the lookahead the end pads out. At the input's rate, rounded down.
    public var framesAwaitingOutput: Int {
        let written48k = max(0, Int(pages.lastGranulePosition) - preSkip)
        return max(0, framesWritten - written48k * sampleRate / 48_000)
    }

    deinit {
        ope_encoder_destroy(encoder)
        conversion.deallocate()
    }

    /// The most bytes one packet of `frameMilliseconds` can take in Ogg. Each Opus frame is at most
    /// 1275 bytes (RFC 6716 §3.2.1); a 40 or 60 ms packet carries two or three 20 ms frames (code
    /// 3), each with a length of up to 2 bytes, and a TOC and a frame count; in a multistream packet
    /// (RFC 7845 family 1: up to 5 streams for 7.1) every stream carries its own, all but the last
    /// self-delimited (up to 2 more bytes); hard CBR pads a packet to its exact size (3,840 bytes
    /// for 60 ms at 512 kb/s, three frames of 1,275 and 15 bytes of framing and padding). 16 bytes
    /// a stream cover those.
    /// In Ogg, lacing values (one per 255 bytes, and one more) and, at worst, a page header of its
    /// own (27 bytes). Bitrate does not bound it: VBR may spend up to the cap on a transient.
    static func packetBytesBound(streams: Int, frameMilliseconds: Double) -> Int {
        let framesPerPacket = max(1, Int((frameMilliseconds / 20).rounded(.up)))
        let packet = streams * (framesPerPacket * (1275 + 2) + 16)
        return packet + packet / 255 + 1 + 27
    }

    /// "libopus 1.3.1, libopusenc 0.2.1".
    public static var libraryVersion: String {
        "\(String(cString: opus_get_version_string())), \(String(cString: ope_get_version_string()))"
    }

    public func encode(_ frames: UnsafeRawBufferPointer) throws(EncoderError) {
        let totalFrames = frames.count / bytesPerFrame
        guard totalFrames > 0 else { return }
        if sampleFormat == .s16LE, reorder == nil {
            // Interleaved little-endian Int16 is exactly libopusenc's integer input.
            let samples = frames.baseAddress!.assumingMemoryBound(to: Int16.self)
            let result = ope_encoder_write(encoder, samples, Int32(totalFrames))
            guard result == OPE_OK, sink.failure == nil else { throw currentError(result) }
            framesWritten += totalFrames
            return
        }
        var frameOffset = 0
        while frameOffset < totalFrames {
            let chunk = min(conversionFrames, totalFrames - frameOffset)
            SampleConversion.toFloat(frames.baseAddress! + frameOffset * bytesPerFrame, format: sampleFormat,
                                     sampleCount: chunk * channels, into: conversion)
            reorder?.apply(conversion, frames: chunk)
            let result = ope_encoder_write_float(encoder, conversion, Int32(chunk))
            guard result == OPE_OK, sink.failure == nil else { throw currentError(result) }
            frameOffset += chunk
            framesWritten += chunk
        }
    }

    public func finish() throws(EncoderError) {
        if framesWritten == 0 {
            // libopusenc 0.2.1 asserts when drained without audio (a stop before the first
            // period): end the stream with a page of our own that decodes to 0 samples. Its
            // pre-skip is the encoder's lookahead, as libopusenc writes in OpusHead.
            var lookahead: Int32 = 0
            _ = hark_ope_get_int(encoder, OPUS_GET_LOOKAHEAD_REQUEST, &lookahead)
            let elementary = OggPage.elementaryStreams(channels: channels, mappingFamily: mappingFamily)
            let page = OggPage.silentEndOfStream(serialNumber: serialNumber, sequence: UInt32(sink.completeWrites),
                                                 preSkip: Int(lookahead), streams: elementary.streams, coupledStreams: elementary.coupled)
            guard page.withUnsafeBytes({ sink.write($0) }) else {
                throw currentError(OPE_WRITE_FAIL)
            }
            return
        }
        let result = ope_encoder_drain(encoder)
        guard result == OPE_OK, sink.failure == nil else { throw currentError(result) }
    }

    /// Cuts the file back to its last complete Ogg page (libopusenc writes a page per call), so it
    /// decodes up to the failure, and ends the stream there: that page, if it is an audio page,
    /// gets the end-of-stream flag in place (one byte and its checksum, no new space: a full disk
    /// has no room for a page of its own). Its granule position already counts exactly the
    /// samples up to it, so decoders return those. What libopusenc still held (up to
    /// `--max-delay` of audio) is lost with the write that failed.
    /// The summary then counts the frames the file holds (`framesHeld`): the granule position less
    /// OpusHead's pre-skip, at the input's rate; not the frames given to libopusenc, which were up to
    /// `--max-delay` more, or up to a drain fewer when the failure came within one.
    public func salvageAfterWriteFailure() {
        guard sink.truncateToLastCompleteWrite() else { return }
        let start = sink.lastCompleteWriteOffset
        guard let page = sink.read(at: start, count: sink.currentOffset - start) else { return }
        if let ended = OggPage.endingTheStream(page) {
            guard sink.overwrite(ended, at: start) else { return }
            framesHeld = OggPage.granulePosition(of: page).flatMap(framesBefore)
        } else if OggPage.granulePosition(of: page) == 0 {
            // The last whole page is a header page (OpusHead, OpusTags): no audio.
            framesHeld = 0
        }
    }

    /// The input frames a stream whose last page has `granule` holds: 48 kHz samples less the
    /// pre-skip OpusHead declares, at the input's rate (rounded down when libopusenc resampled).
    private func framesBefore(_ granule: UInt64) -> Int? {
        guard let head = sink.read(at: streamStart, count: 27 + 1 + 19),
              let preSkip = OggPage.opusHeadPreSkip(firstPage: head) else { return nil }
        let samples = max(0, Int(granule) - preSkip)
        return samples * sampleRate / 48_000
    }

    private func currentError(_ result: Int32) -> EncoderError {
        if let failure = sink.failure { return .writeFailed(errno: failure) }
        return .libraryFailed(String(cString: ope_strerror(result)))
    }

    private static func validate(_ settings: OpusSettings) throws(EncoderError) {
        if let kbps = settings.bitrateKbps, !OpusSettings.bitrateRangeKbps.contains(kbps) {
            throw .libraryFailed("bitrate \(kbps) kb/s is outside 6–512")
        }
        guard OpusSettings.complexities.contains(settings.complexity) else {
            throw .libraryFailed("complexity \(settings.complexity) is outside 0–10")
        }
        guard OpusSettings.frameDurations.contains(settings.frameMilliseconds) else {
            throw .libraryFailed("frame size \(settings.frameMilliseconds) ms is not 2.5, 5, 10, 20, 40 or 60")
        }
        guard OpusSettings.maxDelayRangeMilliseconds.contains(settings.maxDelayMilliseconds) else {
            throw .libraryFailed("max delay \(settings.maxDelayMilliseconds) ms is outside 0–1000")
        }
    }

    private func apply(_ settings: OpusSettings) throws(EncoderError) {
        let application: Int32 = switch settings.application {
        case .audio: OPUS_APPLICATION_AUDIO
        case .voip: OPUS_APPLICATION_VOIP
        case .lowdelay: OPUS_APPLICATION_RESTRICTED_LOWDELAY
        }
        let frameDuration: Int32 = switch settings.frameMilliseconds {
        case 2.5: OPUS_FRAMESIZE_2_5_MS
        case 5: OPUS_FRAMESIZE_5_MS
        case 10: OPUS_FRAMESIZE_10_MS
        case 40: OPUS_FRAMESIZE_40_MS
        case 60: OPUS_FRAMESIZE_60_MS
        default: OPUS_FRAMESIZE_20_MS
        }
        // Muxing delay is in 48 kHz samples; 0 would turn time-based page flushing off altogether
        // (pages would close only every 255 packets), so "no delay" is one packet per page.
        let muxingDelay = Int32(max(1, settings.maxDelayMilliseconds * 48))
        let bitrate = settings.bitrateKbps ?? OpusSettings.defaultBitrateKbps(channels: channels, sampleRate: sampleRate)
        let requests: [(String, Int32, Int32)] = [
            ("application", OPUS_SET_APPLICATION_REQUEST, application),
            ("bitrate", OPUS_SET_BITRATE_REQUEST, Int32((bitrate * 1000).rounded())),
            ("VBR", OPUS_SET_VBR_REQUEST, settings.bitrateMode == .hardCBR ? 0 : 1),
            ("constrained VBR", OPUS_SET_VBR_CONSTRAINT_REQUEST, settings.bitrateMode == .constrainedVBR ? 1 : 0),
            ("complexity", OPUS_SET_COMPLEXITY_REQUEST, Int32(settings.complexity)),
            ("frame size", OPUS_SET_EXPERT_FRAME_DURATION_REQUEST, frameDuration),
            ("input resolution", OPUS_SET_LSB_DEPTH_REQUEST, Int32(min(24, sampleFormat.encodedBitsPerSample))),
            ("max delay", OPE_SET_MUXING_DELAY_REQUEST, muxingDelay),
            // libopusenc holds back this many samples before encoding anything (2 s by default) and
            // uses them for nothing else: pure latency. At 0, a page is written at most the muxing
            // delay after its audio arrives, which is what --max-delay promises.
            ("decision delay", OPE_SET_DECISION_DELAY_REQUEST, 0),
        ]
        for (name, request, value) in requests {
            let result = hark_ope_set_int(encoder, request, value)
            guard result == OPE_OK else {
                throw .libraryFailed("libopusenc refused the \(name) setting: \(String(cString: ope_strerror(result)))")
            }
        }
    }
}

// libopusenc's callbacks: C function pointers that capture nothing; the sink arrives as user data.

/// Passes libopusenc's pages to the sink, noting the granule position of the last one that ends a
/// packet: how much audio the output holds (`OggOpusEncoder.framesAwaitingOutput`). Encoder
/// thread only.
private final class OggPageWriter {
    let sink: OutputSink
    /// The last granule position written, 0 before any audio page.
    var lastGranulePosition: Int64 = 0

    init(sink: OutputSink) { self.sink = sink }

    /// libopusenc hands each page whole, header and body in one buffer (`oggp_get_next_page`).
    func write(_ page: UnsafeRawBufferPointer) -> Bool {
        guard sink.write(page) else { return false }
        // A page on which no packet ends says -1: it moves nothing on. (Read in place:
        // `OggPage.granulePosition` takes an array, which would allocate here.)
        if page.count >= 27, page.loadUnaligned(as: UInt32.self) == 0x5367_674F {  // "OggS"
            let granule = Int64(littleEndian: page.loadUnaligned(fromByteOffset: 6, as: Int64.self))
            if granule >= 0 { lastGranulePosition = granule }
        }
        return true
    }
}

private func opusWriteCallback(_ context: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ length: Int32) -> Int32 {
    let pages = Unmanaged<OggPageWriter>.fromOpaque(context!).takeUnretainedValue()
    return pages.write(UnsafeRawBufferPointer(start: bytes, count: Int(length))) ? 0 : 1
}

/// The sink's descriptor belongs to the session, which closes it after syncing; nothing to do here.
private func opusCloseCallback(_ context: UnsafeMutableRawPointer?) -> Int32 { 0 }
