import Encoding
import Loudness

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
            // Clamped before the conversion, which would stop hark on a value out of Int16's range
            // (and short of 0x7FFF, which says "no value").
            let hundredths = value.flatMap { $0.isFinite ? Int16((min(max($0, -327.68), 327.66) * 100).rounded()) : nil } ?? 0x7FFF
            let bits = UInt16(bitPattern: hundredths)
            header[body + 412 + 2 * index] = UInt8(truncatingIfNeeded: bits)
            header[body + 413 + 2 * index] = UInt8(truncatingIfNeeded: bits >> 8)
        }
        return true
    }
}
