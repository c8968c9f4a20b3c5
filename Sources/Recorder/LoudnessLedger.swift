import AudioFormat
import Encoding
import Loudness

/// The loudness of each file of one output (EBU R128 / ITU-R BS.1770, with libebur128): a meter per
/// file, fed as the audio passes on its way to the codec (`MeasuredEncoder`), so each file gets its
/// own track gain and the recording its overall figures without a second pass.
///
/// Threads: the output's encoder thread adds a meter when a file starts (a split allocates anyway)
/// and feeds it; the session thread reads the meters once that thread has been joined.
final class LoudnessLedger: @unchecked Sendable {
    private let format: PCMFormat
    private let layout: ChannelLayout?
    /// One meter per file, in the order of the files; a meter libebur128 could not set up is left
    /// out of the figures (and its file keeps its placeholders).
    private(set) var meters: [LoudnessMeter?] = []

    init(format: PCMFormat, layout: ChannelLayout?) {
        self.format = format
        self.layout = layout
    }

    /// `codec` behind a new meter: the next file's. Encoder thread (or before it starts).
    func measuring(_ codec: any AudioEncoder) -> any AudioEncoder {
        let meter = LoudnessMeter(format: format, layout: layout)
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
/// (no allocation: libebur128 in histogram mode, see `LoudnessMeter`).
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
    var maximumBytesPerFrame: Double? { codec.maximumBytesPerFrame }
    var maximumFinishBytes: Int? { codec.maximumFinishBytes }
}

/// Writes a finished file's loudness over the room its header kept (`HeaderPatch`):
/// `REPLAYGAIN_TRACK_GAIN` and `REPLAYGAIN_TRACK_PEAK` (ReplayGain 2.0: to −18 LUFS; the true
/// peak) in FLAC, `R128_TRACK_GAIN` (RFC 7845: Q7.8 dB to −23 LUFS) in Ogg Opus, and in WAV the
/// `bext` chunk's LoudnessValue, LoudnessRange and MaxTruePeakLevel (EBU Tech 3285 version 2,
/// hundredths of LUFS, LU and dBTP).
struct LoudnessStamp {
    static let replayGainGainKey = "REPLAYGAIN_TRACK_GAIN"
    static let replayGainPeakKey = "REPLAYGAIN_TRACK_PEAK"
    static let r128GainKey = "R128_TRACK_GAIN"

    let measurement: LoudnessMeasurement

    /// The placeholders a file in `codec` carries until it is measured (`AutomaticTags`).
    static func placeholders(for codec: CodecSettings) -> [(key: String, value: String)] {
        switch codec {
        case .flac: [(replayGainGainKey, LoudnessMeasurement.replayGainTrackGainPlaceholder),
                     (replayGainPeakKey, LoudnessMeasurement.replayGainTrackPeakPlaceholder)]
        case .opus: [(r128GainKey, LoudnessMeasurement.r128TrackGainPlaceholder)]
        case .wav, .raw: []
        }
    }

    func edit(for codec: CodecSettings) -> (inout [UInt8]) -> Bool {
        switch codec {
        case .flac: { header in
            // Each on its own: a key the user set has no placeholder, and the other is still written.
            let gain = HeaderPatch.replace(Self.replayGainGainKey + "=" + LoudnessMeasurement.replayGainTrackGainPlaceholder,
                                           with: Self.replayGainGainKey + "=" + measurement.replayGainTrackGain, in: &header)
            let peak = HeaderPatch.replace(Self.replayGainPeakKey + "=" + LoudnessMeasurement.replayGainTrackPeakPlaceholder,
                                           with: Self.replayGainPeakKey + "=" + measurement.replayGainTrackPeak, in: &header)
            return gain || peak
        }
        case .opus: { header in
            HeaderPatch.replace(Self.r128GainKey + "=" + LoudnessMeasurement.r128TrackGainPlaceholder,
                                with: Self.r128GainKey + "=" + measurement.r128TrackGain, in: &header)
        }
        case .wav: { writeBroadcastExtension(into: &$0) }
        case .raw: { _ in false }
        }
    }

    /// bext v2's loudness fields (offsets 412, 414, 416), each a little-endian Int16 in hundredths;
    /// 0x7FFF (unset, as the header was written) where there is no value.
    private func writeBroadcastExtension(into header: inout [UInt8]) -> Bool {
        guard let body = HeaderPatch.wavChunkBody("bext", minimumSize: WAVHeader.broadcastExtensionSize, in: header),
              header[body + 346] >= 2 else { return false }
        let values = [measurement.integratedLoudness, measurement.loudnessRange, measurement.truePeakDBTP]
        for (index, value) in values.enumerated() {
            let hundredths = value.map { Int16(clamping: Int(($0 * 100).rounded())) } ?? 0x7FFF
            let bits = UInt16(bitPattern: hundredths)
            header[body + 412 + 2 * index] = UInt8(truncatingIfNeeded: bits)
            header[body + 413 + 2 * index] = UInt8(truncatingIfNeeded: bits >> 8)
        }
        return true
    }
}
