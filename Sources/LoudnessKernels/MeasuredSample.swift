/// A sample type the loudness meter reads (S16, S32 and S24 shifted into 32 bits, float): its
/// value as a fraction of full scale, in `Float` for the true-peak filter and in `Double` for the
/// K-weighting filter, and a fast largest |x|.
///
/// Normalisation is BS.1770's and every meter's (libebur128, FFmpeg): 16-bit / 32,768, 32-bit /
/// 2^31, float as it is.
public protocol MeasuredSample {
    /// Which of the three types this is, for code that must pick a concrete function for it
    /// (`LoudnessKernelsAVX2`'s entry points).
    static var kind: MeasuredSampleKind { get }
    /// The sample as a fraction of full scale, rounded to `Float`.
    static func normalised(_ sample: Self) -> Float
    /// The sample as a fraction of full scale, exact (every sample type here fits a `Double`).
    static func fraction(_ sample: Self) -> Double
    /// The `Vector.scalarCount` samples from `samples` on, each as `fraction` gives it: one
    /// vector load and conversion. Two or four lanes only (`Vector` is `SIMD2<Double>` or
    /// `SIMD4<Double>`; anything else traps).
    static func fractions<Vector: SIMD>(_ samples: UnsafePointer<Self>, as: Vector.Type) -> Vector where Vector.Scalar == Double
    /// The largest `normalised` magnitude among `count` samples (0 for none); at least that of
    /// every one of them, as `normalised` rounds it.
    static func largestMagnitude(_ samples: UnsafePointer<Self>, count: Int) -> Float
}

/// The sample types a meter reads.
public enum MeasuredSampleKind: Sendable {
    case int16, int32, float
}

extension Int16: MeasuredSample {
    @inlinable public static var kind: MeasuredSampleKind { .int16 }

    @inlinable @inline(__always)
    public static func normalised(_ sample: Int16) -> Float { Float(sample) * (1 / 32_768) }

    @inlinable @inline(__always)
    public static func fraction(_ sample: Int16) -> Double { Double(sample) * (1 / 32_768) }

    @inlinable @inline(__always)
    public static func fractions<Vector: SIMD>(_ samples: UnsafePointer<Int16>, as: Vector.Type) -> Vector where Vector.Scalar == Double {
        integerFractions(samples, as: Vector.self, scale: 1 / 32_768)
    }

    @inlinable @inline(__always)
    public static func largestMagnitude(_ samples: UnsafePointer<Int16>, count: Int) -> Float {
        let raw = UnsafeRawPointer(samples)
        var high = SIMD16<Int16>(repeating: 0), low = SIMD16<Int16>(repeating: 0)
        var index = 0
        while index + 16 <= count {
            let vector = raw.loadUnaligned(fromByteOffset: 2 * index, as: SIMD16<Int16>.self)
            high.replace(with: vector, where: high .< vector)
            low.replace(with: vector, where: vector .< low)
            index += 16
        }
        var largest = Swift.max(Int32(largestLane(high)), -Int32(smallestLane(low)))
        while index < count {
            largest = Swift.max(largest, abs(Int32(samples[index])))
            index += 1
        }
        return Float(largest) * (1 / 32_768)
    }
}

extension Int32: MeasuredSample {
    @inlinable public static var kind: MeasuredSampleKind { .int32 }

    @inlinable @inline(__always)
    public static func normalised(_ sample: Int32) -> Float { Float(sample) * (1 / 2_147_483_648) }

    @inlinable @inline(__always)
    public static func fraction(_ sample: Int32) -> Double { Double(sample) * (1 / 2_147_483_648) }

    @inlinable @inline(__always)
    public static func fractions<Vector: SIMD>(_ samples: UnsafePointer<Int32>, as: Vector.Type) -> Vector where Vector.Scalar == Double {
        integerFractions(samples, as: Vector.self, scale: 1 / 2_147_483_648)
    }

    /// Each sample is converted to `Float` first: SSE2 has no 32-bit integer max or min (pmaxsd
    /// is SSE4.1), and the compare-and-blend that stood in for them took 28 instructions per
    /// eight samples, where conversion, sign and max take eight. The meter at 8 × 192 kHz, where
    /// this pass is the whole true peak, went from 0.94 to 0.77 ms of CPU per second of audio
    /// (2026-11-25). A copy built for AVX2 measured no faster: the pass is bound by reading the
    /// samples, so both builds run this one.
    /// The result is the same bit for bit: `Float(x)` rounds monotonically and symmetrically, so
    /// the largest |Float(x)| is `Float` of the largest |x| (2^31 for `Int32.min`, exact).
    @inlinable @inline(__always)
    public static func largestMagnitude(_ samples: UnsafePointer<Int32>, count: Int) -> Float {
        let raw = UnsafeRawPointer(samples)
        var largest = SIMD8<Float>()
        var index = 0
        while index + 8 <= count {
            let vector = SIMD8<Float>(raw.loadUnaligned(fromByteOffset: 4 * index, as: SIMD8<Int32>.self))
            largest = lanesMax(largest, lanesAbs(vector))
            index += 8
        }
        var result = largestLane(largest)
        while index < count {
            result = Swift.max(result, abs(Float(samples[index])))
            index += 1
        }
        return result * (1 / 2_147_483_648)
    }
}

extension Float: MeasuredSample {
    @inlinable public static var kind: MeasuredSampleKind { .float }

    @inlinable @inline(__always)
    public static func normalised(_ sample: Float) -> Float { sample }

    @inlinable @inline(__always)
    public static func fraction(_ sample: Float) -> Double { Double(sample) }

    @inlinable @inline(__always)
    public static func fractions<Vector: SIMD>(_ samples: UnsafePointer<Float>, as: Vector.Type) -> Vector where Vector.Scalar == Double {
        let raw = UnsafeRawPointer(samples)
        if Vector.scalarCount == 2 {
            return unsafeBitCast(SIMD2<Double>(raw.loadUnaligned(as: SIMD2<Float>.self)), to: Vector.self)
        }
        precondition(Vector.scalarCount == 4, "fractions: two or four lanes")
        return unsafeBitCast(SIMD4<Double>(raw.loadUnaligned(as: SIMD4<Float>.self)), to: Vector.self)
    }

    @inlinable @inline(__always)
    public static func largestMagnitude(_ samples: UnsafePointer<Float>, count: Int) -> Float {
        let raw = UnsafeRawPointer(samples)
        var largest = SIMD8<Float>()
        var index = 0
        while index + 8 <= count {
            let vector = raw.loadUnaligned(fromByteOffset: 4 * index, as: SIMD8<Float>.self)
            largest = lanesMax(largest, lanesAbs(vector))
            index += 8
        }
        var result = largestLane(largest)
        while index < count {
            result = max(result, abs(samples[index]))
            index += 1
        }
        return result
    }
}

/// Two or four integer samples from `samples` on, converted to `Double` and multiplied by `scale`
/// (a power of two, so each lane is exactly its `fraction`), from one unaligned vector load.
@inlinable @inline(__always)
func integerFractions<Integer: FixedWidthInteger & SIMDScalar, Vector: SIMD>(
    _ samples: UnsafePointer<Integer>, as: Vector.Type, scale: Double
) -> Vector where Vector.Scalar == Double {
    let raw = UnsafeRawPointer(samples)
    if Vector.scalarCount == 2 {
        return unsafeBitCast(SIMD2<Double>(raw.loadUnaligned(as: SIMD2<Integer>.self)) * scale, to: Vector.self)
    }
    precondition(Vector.scalarCount == 4, "fractions: two or four lanes")
    return unsafeBitCast(SIMD4<Double>(raw.loadUnaligned(as: SIMD4<Integer>.self)) * scale, to: Vector.self)
}

// Vector helpers that compile to a few instructions: the standard library's `pointwiseMax` and
// `max()` for float vectors go element by element through `Float.maximum` (NaN rules), out of line.

/// |v|, lane by lane (the sign bit cleared).
@inlinable @inline(__always)
public func lanesAbs(_ v: SIMD8<Float>) -> SIMD8<Float> {
    unsafeBitCast(unsafeBitCast(v, to: SIMD8<UInt32>.self) & 0x7FFF_FFFF, to: SIMD8<Float>.self)
}

/// The larger of `a` and `b`, lane by lane (no NaNs here).
@inlinable @inline(__always)
public func lanesMax(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
    a.replacing(with: b, where: a .< b)
}

/// The largest lane of `v` (no NaNs here).
@inlinable @inline(__always)
public func largestLane(_ v: SIMD8<Float>) -> Float {
    let half = lanesMax(v, SIMD8(lowHalf: v.highHalf, highHalf: v.lowHalf))
    var result = half[0]
    for lane in 1..<4 where half[lane] > result { result = half[lane] }
    return result
}

/// The largest lane of `v`.
@inlinable @inline(__always)
public func largestLane(_ v: SIMD16<Int16>) -> Int16 {
    var half = v.lowHalf
    half.replace(with: v.highHalf, where: half .< v.highHalf)
    var quarter = half.lowHalf
    quarter.replace(with: half.highHalf, where: quarter .< half.highHalf)
    return Swift.max(Swift.max(quarter[0], quarter[1]), Swift.max(quarter[2], quarter[3]))
}

/// The smallest lane of `v`.
@inlinable @inline(__always)
public func smallestLane(_ v: SIMD16<Int16>) -> Int16 {
    var half = v.lowHalf
    half.replace(with: v.highHalf, where: v.highHalf .< half)
    var quarter = half.lowHalf
    quarter.replace(with: half.highHalf, where: half.highHalf .< quarter)
    return Swift.min(Swift.min(quarter[0], quarter[1]), Swift.min(quarter[2], quarter[3]))
}
