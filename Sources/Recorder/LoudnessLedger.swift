import AudioFormat
import Encoding
import Loudness

/// The loudness of each file of one output (EBU R128 / ITU-R BS.1770, `LoudnessMeter`): a meter per
/// file, fed as the audio passes on its way to the codec (`MeasuredEncoder`), so each file gets its
/// own track gain and the recording its overall figures without a second pass.
///
/// Threads: the output's encoder thread adds a meter when a file starts (a split allocates anyway)
/// and feeds it; the session thread reads the meters once that thread has been joined.
final class LoudnessLedger: @unchecked Sendable {
    private let format: PCMFormat
    private let layout: ChannelLayout?
    /// Whether the codec stores float samples clipped to full scale (FLAC, Opus).
    private let clipsFloats: Bool
    /// One meter per file, in the order of the files; a meter the format has none for is left
    /// out of the figures (and its file keeps its placeholders).
    private(set) var meters: [LoudnessMeter?] = []

    init(format: PCMFormat, layout: ChannelLayout?, codec: CodecSettings) {
        self.format = format
        self.layout = layout
        clipsFloats = switch codec {
        case .flac, .opus: true
        case .wav, .raw: false
        }
    }

    /// `codec` behind a new meter: the next file's. Encoder thread (or before it starts).
    func measuring(_ codec: any AudioEncoder) -> any AudioEncoder {
        let meter = LoudnessMeter(format: format, layout: layout, clipsFloats: clipsFloats)
        meters.append(meter)
        guard let meter else { return codec }
        return MeasuredEncoder(codec, meter: meter)
    }

    /// The output's loudness as a whole (its files together); nil when nothing was measured.
    var measurement: LoudnessMeasurement? {
        let measured = meters.compactMap { $0 }
        return measured.isEmpty ? nil : LoudnessMeter.combined(measured)
    }
}

/// A codec whose input is measured on its way in. `encode` adds the meter's pass over the samples
/// (no allocation: see `LoudnessMeter`).
final class MeasuredEncoder: AudioEncoder {
    private let codec: any AudioEncoder
    private let meter: LoudnessMeter

    init(_ codec: any AudioEncoder, meter: LoudnessMeter) {
        self.codec = codec
        self.meter = meter
    }

    func encode(_ frames: UnsafeRawBufferPointer) throws(EncoderError) {
        meter.measure(frames)
        try codec.encode(frames)
    }

    func finish() throws(EncoderError) { try codec.finish() }
    func salvageAfterWriteFailure() { codec.salvageAfterWriteFailure() }
    var bytesWritten: Int { codec.bytesWritten }
    var framesHeld: Int? { codec.framesHeld }
    var maximumBytesPerFrame: Double? { codec.maximumBytesPerFrame }
    var maximumFinishBytes: Int? { codec.maximumFinishBytes }
    var framesAwaitingOutput: Int { codec.framesAwaitingOutput }
    var headerBytesAhead: Int { codec.headerBytesAhead }
    var framesBeforeSecondFileStart: Int? { codec.framesBeforeSecondFileStart }
}
