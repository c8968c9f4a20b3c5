/// ITU-R BS.1770-4's two K-weighting stages for one rate, normalised (a0 = 1): a high shelf (its
/// numerator `shelfB0…B2`, denominator `shelfA1`, `shelfA2`) and the RLB high-pass (numerator
/// 1, −2, 1; denominator `highPassA1`, `highPassA2`). `KWeightingFilter` says how they are computed.
public struct KWeightingCoefficients: Equatable, Sendable {
    public var shelfB0, shelfB1, shelfB2, shelfA1, shelfA2: Double
    public var highPassA1, highPassA2: Double

    public init(shelfB0: Double, shelfB1: Double, shelfB2: Double, shelfA1: Double, shelfA2: Double,
                highPassA1: Double, highPassA2: Double) {
        (self.shelfB0, self.shelfB1, self.shelfB2, self.shelfA1, self.shelfA2) = (shelfB0, shelfB1, shelfB2, shelfA1, shelfA2)
        (self.highPassA1, self.highPassA2) = (highPassA1, highPassA2)
    }
}

/// The K-weighting filter's loop over interleaved frames (`KWeightingFilter` owns the state and
/// says why it is shaped so): one source, compiled twice, once for every x86-64 or arm64
/// processor (`Loudness`) and once for AVX2 with FMA (`LoudnessKernelsAVX2`), the arithmetic
/// chosen by `Math`.
public enum KWeightingKernel {
    /// The state vectors per lane group, in this order: the shelf's last two inputs and outputs,
    /// the high-pass's last two outputs, the sum of squared outputs. (Inlinable constants rather
    /// than `static let`s, so that the meter's loops read no lazily initialised global.)
    @inlinable public static var slots: Int { 7 }
    @inlinable public static var sumSlot: Int { 6 }

    /// Channels `first` and `first + 1` of `channels` (the last channel again where there is no
    /// second), in the two lanes of `memory`'s vectors.
    @inlinable @inline(__always)
    public static func pair<Sample: MeasuredSample, Math: KernelArithmetic>(
        _ samples: UnsafePointer<Sample>, frames: Int, channels: Int, first c: Int,
        memory: UnsafeMutablePointer<SIMD2<Double>>, coefficients: KWeightingCoefficients, _ math: Math.Type
    ) {
        if c + 1 < channels {
            // Two neighbouring samples in one load: a lane-by-lane gather here made the compiler
            // merge into a register that held the running sum, chaining every frame to the last.
            run(samples, frames: frames, stride: channels, memory: memory, coefficients: coefficients, math) { frame in
                Sample.fractions(frame + c, as: SIMD2<Double>.self)
            }
        } else {
            run(samples, frames: frames, stride: channels, memory: memory, coefficients: coefficients, math) { frame in
                SIMD2(repeating: Sample.fraction(frame[c]))
            }
        }
    }

    /// Channels `first…first + 3` of `channels` (the last channel again past it), in the four
    /// lanes of `memory`'s vectors.
    @inlinable @inline(__always)
    public static func quad<Sample: MeasuredSample, Math: KernelArithmetic>(
        _ samples: UnsafePointer<Sample>, frames: Int, channels: Int, first c: Int,
        memory: UnsafeMutablePointer<SIMD4<Double>>, coefficients: KWeightingCoefficients, _ math: Math.Type
    ) {
        if c + 3 < channels && Math.loadsFourLanesWhole {
            run(samples, frames: frames, stride: channels, memory: memory, coefficients: coefficients, math) { frame in
                Sample.fractions(frame + c, as: SIMD4<Double>.self)
            }
        } else {
            let last = channels - 1
            run(samples, frames: frames, stride: channels, memory: memory, coefficients: coefficients, math) { frame in
                SIMD4(Sample.fraction(frame[c]), Sample.fraction(frame[c + 1]),
                      Sample.fraction(frame[min(c + 2, last)]), Sample.fraction(frame[min(c + 3, last)]))
            }
        }
    }

    /// Both stages over the lanes `input` reads from each frame, the state in registers for the
    /// whole loop. Each stage is direct form I, its feedback terms subtracted last (the older
    /// output's first), so that one fused multiply-subtract, or one multiply and one subtract, is all
    /// that lies on the path from one output to the next. With `PortableArithmetic` every value is
    /// rounded exactly as `(b0·x + b1·x1 + b2·x2 − a2·y2) − a1·y1` rounds it.
    @inlinable @inline(__always)
    static func run<Sample: MeasuredSample, Lanes: SIMD, Math: KernelArithmetic>(
        _ samples: UnsafePointer<Sample>, frames: Int, stride: Int,
        memory: UnsafeMutablePointer<Lanes>, coefficients c: KWeightingCoefficients, _ math: Math.Type,
        input: (UnsafePointer<Sample>) -> Lanes
    ) where Lanes.Scalar == Double {
        let b0 = Lanes(repeating: c.shelfB0), b1 = Lanes(repeating: c.shelfB1), b2 = Lanes(repeating: c.shelfB2)
        let a1 = Lanes(repeating: c.shelfA1), a2 = Lanes(repeating: c.shelfA2)
        let r1 = Lanes(repeating: c.highPassA1), r2 = Lanes(repeating: c.highPassA2)
        var x1 = memory[0], x2 = memory[1], y1 = memory[2], y2 = memory[3], z1 = memory[4], z2 = memory[5]
        var sum = memory[sumSlot]
        var frame = samples
        for _ in 0..<frames {
            let x = input(frame)
            let shelfInput = Math.multiplyAdd(b2, x2, Math.multiplyAdd(b1, x1, b0 * x))
            let y = Math.multiplySubtract(a1, y1, Math.multiplySubtract(a2, y2, shelfInput))
            let z = Math.multiplySubtract(r1, z1, Math.multiplySubtract(r2, z2, y - 2 * y1 + y2))
            x2 = x1; x1 = x
            y2 = y1; y1 = y
            z2 = z1; z1 = z
            sum = Math.multiplyAdd(z, z, sum)
            frame += stride
        }
        memory[0] = x1; memory[1] = x2; memory[2] = y1; memory[3] = y2; memory[4] = z1; memory[5] = z2
        memory[sumSlot] = sum
    }
}
