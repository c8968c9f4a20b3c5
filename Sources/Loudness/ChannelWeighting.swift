import AudioFormat

/// How ITU-R BS.1770-4 counts one channel towards loudness: which speaker it feeds decides its
/// weight. Channels within 60°–120° of the front (the 5.1 surrounds at ±110°, the 7.1 sides at
/// ±90°) count 1.41 times (+1.5 dB); the LFE is left out; every other channel counts once.
///
/// The weights are those of libebur128 and FFmpeg: 1.41 (BS.1770-4's Table 3 rounds +1.5 dB so)
/// for the surrounds and sides, 0 for the LFE, 1 for every other channel (`weight`).
enum LoudnessChannelRole: Sendable, Hashable {
    /// Left out: the LFE channel (BS.1770-4 §2.3).
    case ignored
    /// Front left (+30°), front right (−30°), centre (0°); mono counts as a centre channel.
    case left, right, center
    /// Between front left or right and centre (WAVE's FLC/FRC); weight 1.
    case leftOfCenter, rightOfCenter
    /// The 5.1 and quad surround pair (WAVE's "back" RL/RR when there are no side channels): ±110°, weight 1.41.
    case leftSurround, rightSurround
    /// The 7.1 side pair: ±90°, weight 1.41.
    case leftSide, rightSide
    /// The 7.1 back pair, behind the sides: ±135°, weight 1 (outside BS.1770-4's 60°–120°).
    case leftBack, rightBack
    /// Rear centre (180°), weight 1.
    case backCenter

    /// The role of each channel of `layout`, in the stream's order.
    ///
    /// WAVE's and ALSA's RL/RR are the surround pair of 5.1 and quad (±110°, BS.775) but the back
    /// pair of 7.1 (±135°), which BS.1770-4 weights differently; which one they are follows from
    /// whether the layout also has a side pair. With WAVE's default orders for one to six channels
    /// this gives exactly libebur128's default map (L, R, C, unused, Ls, Rs); for seven and eight
    /// channels that default would leave the side pair out and weight 6.1's rear centre as a surround.
    static func roles(for layout: ChannelLayout) -> [LoudnessChannelRole] {
        let hasSidePair = layout.positions.contains(.sideLeft) || layout.positions.contains(.sideRight)
        return layout.positions.map { position in
            switch position {
            case .mono, .frontCenter: .center
            case .frontLeft: .left
            case .frontRight: .right
            case .frontLeftCenter: .leftOfCenter
            case .frontRightCenter: .rightOfCenter
            case .lowFrequency: .ignored
            case .rearLeft: hasSidePair ? .leftBack : .leftSurround
            case .rearRight: hasSidePair ? .rightBack : .rightSurround
            case .sideLeft: .leftSide
            case .sideRight: .rightSide
            case .rearCenter: .backCenter
            }
        }
    }

    /// The channel's BS.1770-4 weight G: 1.41 for the surround and side pairs, 0 for the LFE, 1
    /// otherwise.
    var weight: Double {
        switch self {
        case .ignored: 0
        case .leftSurround, .rightSurround, .leftSide, .rightSide: 1.41
        case .left, .right, .center, .leftOfCenter, .rightOfCenter, .leftBack, .rightBack, .backCenter: 1
        }
    }

    /// The roles of channels that come with no layout (more than eight, where WAVE has no default
    /// order): libebur128's default map, which hark measured with before, L, R, C, the LFE left
    /// out, Ls, Rs, and every further channel left out.
    static func rolesWithoutLayout(channels: Int) -> [LoudnessChannelRole] {
        let known: [LoudnessChannelRole] = [.left, .right, .center, .ignored, .leftSurround, .rightSurround]
        return (0..<channels).map { $0 < known.count ? known[$0] : .ignored }
    }
}
