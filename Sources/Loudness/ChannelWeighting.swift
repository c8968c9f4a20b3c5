import AudioFormat

/// How ITU-R BS.1770-4 counts one channel towards loudness: which speaker it feeds decides its
/// weight. Channels within 60°–120° of the front (the 5.1 surrounds at ±110°, the 7.1 sides at
/// ±90°) count 1.41 times (+1.5 dB); the LFE is left out; every other channel counts once.
///
/// `EBUR128State.setRole` turns a role into libebur128's `enum channel` value, whose weights are
/// exactly these (`ebur128_calc_gating_block`: ±60, ±90 and ±110 get 1.41).
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
}
