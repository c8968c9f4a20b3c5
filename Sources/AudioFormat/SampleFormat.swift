/// How one sample is laid out in memory, named as ALSA and arecord name it.
///
/// Every format is little-endian and signed; `s24LE` is ALSA's `S24_LE`: 24 significant bits
/// in the low three bytes of a 4-byte container (the top byte is ignored on input).
public enum SampleFormat: String, CaseIterable, Sendable, Hashable {
    case s16LE = "S16_LE"
    case s24LE = "S24_LE"
    case s32LE = "S32_LE"
    case floatLE = "FLOAT_LE"

    /// Bytes one sample occupies in the capture buffer.
    public var bytesPerSample: Int {
        switch self {
        case .s16LE: 2
        case .s24LE, .s32LE, .floatLE: 4
        }
    }

    /// Bits of resolution an encoder should keep for this format.
    ///
    /// Float input is converted to 24-bit integers, the resolution of a 32-bit float's mantissa.
    public var encodedBitsPerSample: Int {
        switch self {
        case .s16LE: 16
        case .s24LE, .floatLE: 24
        case .s32LE: 32
        }
    }

    /// The name arecord and ALSA use (`S16_LE`, ...).
    public var alsaName: String { rawValue }

    /// Parses an ALSA-style name, case-insensitively (`s16_le`, `S24_LE`, `FLOAT_LE`, `float`).
    public init?(alsaName: String) {
        let upper = alsaName.uppercased()
        if let format = SampleFormat(rawValue: upper) {
            self = format
        } else if upper == "FLOAT" {
            self = .floatLE
        } else {
            return nil
        }
    }
}
