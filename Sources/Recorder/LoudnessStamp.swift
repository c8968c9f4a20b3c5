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

    func edit(for codec: CodecSettings) -> (inout HeaderRoom) -> Bool {
        switch codec {
        case .flac: { room in
            // Each on its own: a key the user set has no placeholder, and the other is still written.
            let gain = room.overwriteComment(key: Self.replayGainGainKey, placeholder: LoudnessMeasurement.replayGainTrackGainPlaceholder,
                                             with: measurement.replayGainTrackGain)
            let peak = room.overwriteComment(key: Self.replayGainPeakKey, placeholder: LoudnessMeasurement.replayGainTrackPeakPlaceholder,
                                             with: measurement.replayGainTrackPeak)
            return gain || peak
        }
        case .opus: { room in
            room.overwriteComment(key: Self.r128GainKey, placeholder: LoudnessMeasurement.r128TrackGainPlaceholder,
                                  with: measurement.r128TrackGain)
        }
        case .wav: { writeBroadcastExtension(into: &$0) }
        case .raw: { _ in false }
        }
    }

    /// bext v2's loudness fields (offsets 412, 414, 416), each a little-endian Int16 in hundredths;
    /// 0x7FFF (unset, as the header was written) where there is no value.
    private func writeBroadcastExtension(into room: inout HeaderRoom) -> Bool {
        guard room.isBroadcastExtension, room.bytes[346] >= 2 else { return false }
        let values = [measurement.integratedLoudness, measurement.loudnessRange, measurement.truePeakDBTP]
        for (index, value) in values.enumerated() {
            // Clamped before the conversion, which would stop hark on a value out of Int16's range
            // (and short of 0x7FFF, which says "no value").
            let hundredths = value.flatMap { $0.isFinite ? Int16((min(max($0, -327.68), 327.66) * 100).rounded()) : nil } ?? 0x7FFF
            let bits = UInt16(bitPattern: hundredths)
            room.bytes[412 + 2 * index] = UInt8(truncatingIfNeeded: bits)
            room.bytes[413 + 2 * index] = UInt8(truncatingIfNeeded: bits >> 8)
        }
        return true
    }
}
