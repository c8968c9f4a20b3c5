/// How a kernel computes `c + a × b` on vectors: the one operation whose form depends on the
/// instructions the kernel is compiled for.
///
/// `PortableArithmetic` multiplies, then adds: two roundings, and what every x86-64 (SSE2) and
/// arm64 processor runs natively. `FusedArithmetic` is one fused multiply-add, one rounding: a single
/// instruction where the code is compiled for FMA (`LoudnessKernelsAVX2`; arm64 always has it);
/// on baseline x86-64 it would call libm's software `fma`, many times slower, so only that module
/// uses it.
///
/// Why it matters: the K-weighting filter's feedback is a multiply and a subtract per sample
/// (8 cycles of latency); fused, it is one instruction (4), which nearly halves the filter's time.
public protocol KernelArithmetic {
    /// `c + a × b`, lane by lane.
    static func multiplyAdd<Vector: SIMD>(_ a: Vector, _ b: Vector, _ c: Vector) -> Vector where Vector.Scalar: FloatingPoint
    /// `c − a × b`, lane by lane.
    static func multiplySubtract<Vector: SIMD>(_ a: Vector, _ b: Vector, _ c: Vector) -> Vector where Vector.Scalar: FloatingPoint

    /// Whether `KWeightingKernel.quad` reads a frame's four samples with one vector load (true) or
    /// lane by lane. Measured, 8 channels × 192 kHz S32 (2026-11-25, the meter as a whole): lane by
    /// lane, the AVX2 build's compiler merged the lanes into a register that held the running sum,
    /// which chained every frame to the one before (4.99 ms per second of audio, 0.96 with one
    /// load); the portable build ran no faster with one load (2.58 against 2.59 lane by lane).
    static var loadsFourLanesWhole: Bool { get }
}

/// `c ± a × b` as a multiply and an add or subtract, each rounded: written so, a loop rounds exactly
/// as it did when it was written out with `*`, `+` and `-`.
public enum PortableArithmetic: KernelArithmetic {
    @inlinable @inline(__always)
    public static func multiplyAdd<Vector: SIMD>(_ a: Vector, _ b: Vector, _ c: Vector) -> Vector where Vector.Scalar: FloatingPoint {
        c + a * b
    }

    @inlinable @inline(__always)
    public static func multiplySubtract<Vector: SIMD>(_ a: Vector, _ b: Vector, _ c: Vector) -> Vector where Vector.Scalar: FloatingPoint {
        c - a * b
    }

    @inlinable public static var loadsFourLanesWhole: Bool { false }
}

/// `c + a × b` fused: one rounding (IEEE 754 fusedMultiplyAdd). Only for code compiled with FMA
/// enabled; see `KernelArithmetic`.
public enum FusedArithmetic: KernelArithmetic {
    @inlinable @inline(__always)
    public static func multiplyAdd<Vector: SIMD>(_ a: Vector, _ b: Vector, _ c: Vector) -> Vector where Vector.Scalar: FloatingPoint {
        c.addingProduct(a, b)
    }

    /// The negation is exact, and hoisted out of a loop whose `a` is constant.
    @inlinable @inline(__always)
    public static func multiplySubtract<Vector: SIMD>(_ a: Vector, _ b: Vector, _ c: Vector) -> Vector where Vector.Scalar: FloatingPoint {
        c.addingProduct(-a, b)
    }

    @inlinable public static var loadsFourLanesWhole: Bool { true }
}
