import AudioFormat

/// Converts interleaved capture samples into the right-justified `Int32` samples encoders take.
///
/// Real-time safe: pure loops over caller-owned memory.
public enum SampleConversion {
    /// Converts `sampleCount` samples of `format` from `source` into `destination`.
    ///
    /// - S16_LE and S32_LE are widened as they are.
    /// - S24_LE keeps the low 24 bits of each 4-byte container, sign-extended from bit 23 (ALSA
    ///   leaves the top byte unspecified).
    /// - FLOAT_LE is scaled to 24-bit integers and clipped to [-1, 1).
    public static func toInt32(
        _ source: UnsafeRawPointer, format: SampleFormat, sampleCount: Int, into destination: UnsafeMutablePointer<Int32>
    ) {
        switch format {
        case .s16LE:
            for index in 0..<sampleCount {
                destination[index] = Int32(Int16(littleEndian: source.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)))
            }
        case .s24LE:
            for index in 0..<sampleCount {
                let container = Int32(littleEndian: source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self))
                destination[index] = (container << 8) >> 8
            }
        case .s32LE:
            for index in 0..<sampleCount {
                destination[index] = Int32(littleEndian: source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self))
            }
        case .floatLE:
            let scale: Float = 8_388_608  // 2^23
            for index in 0..<sampleCount {
                let bits = UInt32(littleEndian: source.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
                let scaled = (Float(bitPattern: bits) * scale).rounded()
                destination[index] = scaled.isNaN ? 0 : Int32(min(max(scaled, -8_388_608), 8_388_607))
            }
        }
    }

    /// Converts `sampleCount` samples of `format` into floats in [-1, 1), as libopusenc takes them.
    public static func toFloat(
        _ source: UnsafeRawPointer, format: SampleFormat, sampleCount: Int, into destination: UnsafeMutablePointer<Float>
    ) {
        switch format {
        case .s16LE:
            for index in 0..<sampleCount {
                destination[index] = Float(Int16(littleEndian: source.loadUnaligned(fromByteOffset: index * 2, as: Int16.self))) / 32_768
            }
        case .s24LE:
            for index in 0..<sampleCount {
                let container = Int32(littleEndian: source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self))
                destination[index] = Float((container << 8) >> 8) / 8_388_608
            }
        case .s32LE:
            for index in 0..<sampleCount {
                destination[index] = Float(Int32(littleEndian: source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self))) / 2_147_483_648
            }
        case .floatLE:
            for index in 0..<sampleCount {
                let value = Float(bitPattern: UInt32(littleEndian: source.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
                destination[index] = value.isNaN ? 0 : min(max(value, -1), 1)
            }
        }
    }
}
