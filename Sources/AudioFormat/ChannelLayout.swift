/// Which speaker a channel feeds, named as ALSA's channel maps name them (`snd_pcm_chmap_position`,
/// `FL`, `FR`, …; `RL`/`RR` are WAVE's "back" pair).
public enum SpeakerPosition: String, CaseIterable, Sendable, Hashable {
    case mono = "MONO"
    case frontLeft = "FL", frontRight = "FR", rearLeft = "RL", rearRight = "RR"
    case frontCenter = "FC", lowFrequency = "LFE", sideLeft = "SL", sideRight = "SR", rearCenter = "RC"
    case frontLeftCenter = "FLC", frontRightCenter = "FRC"

    /// ALSA's `SND_CHMAP_*` value (alsa/pcm.h); nil for positions hark does not name.
    public init?(alsaPosition: UInt32) {
        let positions: [UInt32: SpeakerPosition] = [
            2: .mono, 3: .frontLeft, 4: .frontRight, 5: .rearLeft, 6: .rearRight, 7: .frontCenter, 8: .lowFrequency,
            9: .sideLeft, 10: .sideRight, 11: .rearCenter, 12: .frontLeftCenter, 13: .frontRightCenter,
        ]
        guard let position = positions[alsaPosition] else { return nil }
        self = position
    }

    /// WAVE's `dwChannelMask` bit (SPEAKER_FRONT_LEFT = 0x1, …); mono has none.
    public var waveMaskBit: UInt32? {
        switch self {
        case .mono: nil
        case .frontLeft: 0x1
        case .frontRight: 0x2
        case .frontCenter: 0x4
        case .lowFrequency: 0x8
        case .rearLeft: 0x10
        case .rearRight: 0x20
        case .frontLeftCenter: 0x40
        case .frontRightCenter: 0x80
        case .rearCenter: 0x100
        case .sideLeft: 0x200
        case .sideRight: 0x400
        }
    }
}

/// The speaker each channel of an interleaved stream feeds, in the stream's order: from the
/// device's ALSA channel map, or from `--channel-map`. Encoders use it to put channels in the
/// order their format requires (WAVE's mask order for WAV and FLAC, Vorbis order for Opus's
/// mapping family 1) and to say which speakers are there.
public struct ChannelLayout: Sendable, Hashable, CustomStringConvertible {
    public let positions: [SpeakerPosition]

    public init?(_ positions: [SpeakerPosition]) {
        guard !positions.isEmpty, Set(positions).count == positions.count else { return nil }
        self.positions = positions
    }

    /// Parses `FL,FR,FC,LFE,RL,RR` (case-insensitive); nil for an unknown or repeated name.
    public init?(parsing text: String) {
        let names = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { String($0.filter { $0 != " " }).uppercased() }
        let positions = names.compactMap(SpeakerPosition.init(rawValue:))
        guard positions.count == names.count else { return nil }
        self.init(positions)
    }

    public var description: String { positions.map(\.rawValue).joined(separator: ",") }

    /// WAVE's channel mask for these speakers; nil when one has no WAVE position (mono).
    public var waveMask: UInt32? {
        var mask: UInt32 = 0
        for position in positions {
            guard let bit = position.waveMaskBit else { return nil }
            mask |= bit
        }
        return mask
    }

    /// The stream's channels in WAVE order (ascending mask bit, as WAV and FLAC store them):
    /// `order[i]` is the stream channel that goes `i`th. Nil when `waveMask` is.
    public var waveOrder: [Int]? {
        guard waveMask != nil else { return nil }
        return positions.indices.sorted { positions[$0].waveMaskBit! < positions[$1].waveMaskBit! }
    }

    /// The stream's channels in the Vorbis order RFC 7845 mapping family 1 requires for 3–8
    /// channels (RFC 7845 §5.1.1.2): `order[i]` is the stream channel that goes `i`th. Nil when
    /// the speakers are not one of family 1's layouts. For four to six channels the surround
    /// pair may be the side pair (SL/SR) instead of the rear one, as many 5.1 devices call it.
    public var vorbisOrder: [Int]? {
        let layouts: [Int: [SpeakerPosition]] = [
            3: [.frontLeft, .frontCenter, .frontRight],
            4: [.frontLeft, .frontRight, .rearLeft, .rearRight],
            5: [.frontLeft, .frontCenter, .frontRight, .rearLeft, .rearRight],
            6: [.frontLeft, .frontCenter, .frontRight, .rearLeft, .rearRight, .lowFrequency],
            7: [.frontLeft, .frontCenter, .frontRight, .sideLeft, .sideRight, .rearCenter, .lowFrequency],
            8: [.frontLeft, .frontCenter, .frontRight, .sideLeft, .sideRight, .rearLeft, .rearRight, .lowFrequency],
        ]
        guard let wanted = layouts[positions.count] else { return nil }
        var own = positions
        if (4...6).contains(positions.count), !own.contains(.rearLeft), !own.contains(.rearRight) {
            own = own.map { $0 == .sideLeft ? .rearLeft : $0 == .sideRight ? .rearRight : $0 }
        }
        let order = wanted.compactMap { own.firstIndex(of: $0) }
        return order.count == wanted.count ? order : nil
    }

    /// A stereo stream's channels in the left-right order Opus's mapping family 0 has (RFC 7845
    /// §5.1.1.1), which says no more than "left, right": `[0, 1]` or `[1, 0]` when the two are
    /// FL and FR, nil for any other pair (kept in the stream's order, as family 0 can name none).
    public var stereoOrder: [Int]? {
        guard positions.count == 2, let left = positions.firstIndex(of: .frontLeft),
              let right = positions.firstIndex(of: .frontRight) else { return nil }
        return [left, right]
    }

    /// Whether the speakers are what Opus's mono or stereo (mapping family 0) mean: MONO or FC
    /// alone, or FL and FR in either order.
    public var isMonoOrLeftRight: Bool {
        positions == [.mono] || positions == [.frontCenter] || stereoOrder != nil
    }

    /// What WAV and FLAC assume of `channels` channels when nothing says otherwise: WAVE's default
    /// order (mono; FL FR; FL FR FC; quad; 5.0; 5.1; 6.1; 7.1).
    public static func waveDefault(channels: Int) -> ChannelLayout? {
        let layouts: [Int: [SpeakerPosition]] = [
            1: [.frontCenter], 2: [.frontLeft, .frontRight], 3: [.frontLeft, .frontRight, .frontCenter],
            4: [.frontLeft, .frontRight, .rearLeft, .rearRight],
            5: [.frontLeft, .frontRight, .frontCenter, .rearLeft, .rearRight],
            6: [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .rearLeft, .rearRight],
            7: [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .rearCenter, .sideLeft, .sideRight],
            8: [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .rearLeft, .rearRight, .sideLeft, .sideRight],
        ]
        return layouts[channels].flatMap(ChannelLayout.init)
    }
}
