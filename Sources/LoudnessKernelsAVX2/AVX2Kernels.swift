import LoudnessKernels

/// The loudness meter's two inner loops compiled for AVX2 with FMA (this module's build flags,
/// Package.swift): the K-weighting filter's feedback in fused multiply-adds, the true-peak filter
/// eight lanes to a register. Measured on the development machine (release build, the music-like
/// signal, 500 ms calls, `/tmp` harness over the sources, 2026-11-25): the whole meter 0.266 →
/// 0.149 ms of CPU per second of 48 kHz stereo S16, 2.59 → 0.96 ms for 8 channels at 192 kHz S32;
/// a K-weighting pair alone 0.165 → 0.086 ms (a loop of the same arithmetic, by itself).
///
/// Nothing here may run on a processor without AVX2 and FMA: it would stop with SIGILL. So every
/// entry point is `@inline(never)` (its body, compiled here, is never copied into a caller compiled
/// for the baseline; the kernels' `@inlinable` source is copied in here, by design), this module
/// defines no type with stored state or global that could run code on its own, and `Loudness`'s
/// filters call in only for a meter made with `LoudnessKernelChoice.avx2FMA`, which exists only
/// where CPUID found both features and the OS saving the AVX registers. `scripts/test` checks that
/// this module's object defines no code but these entry points (a shared specialisation kept out
/// of line here could be the copy the linker keeps for every caller).
public enum AVX2Kernels {
    /// `KWeightingKernel.pair` with fused arithmetic, for `Sample.kind`'s type at `samples`.
    @inline(never)
    public static func kWeightingPair(
        _ samples: UnsafeRawPointer, kind: MeasuredSampleKind, frames: Int, channels: Int, first: Int,
        memory: UnsafeMutablePointer<SIMD2<Double>>, coefficients: KWeightingCoefficients
    ) {
        switch kind {
        case .int16:
            KWeightingKernel.pair(samples.assumingMemoryBound(to: Int16.self), frames: frames, channels: channels, first: first,
                                  memory: memory, coefficients: coefficients, FusedArithmetic.self)
        case .int32:
            KWeightingKernel.pair(samples.assumingMemoryBound(to: Int32.self), frames: frames, channels: channels, first: first,
                                  memory: memory, coefficients: coefficients, FusedArithmetic.self)
        case .float:
            KWeightingKernel.pair(samples.assumingMemoryBound(to: Float.self), frames: frames, channels: channels, first: first,
                                  memory: memory, coefficients: coefficients, FusedArithmetic.self)
        }
    }

    /// `KWeightingKernel.quad` with fused arithmetic, for `Sample.kind`'s type at `samples`.
    @inline(never)
    public static func kWeightingQuad(
        _ samples: UnsafeRawPointer, kind: MeasuredSampleKind, frames: Int, channels: Int, first: Int,
        memory: UnsafeMutablePointer<SIMD4<Double>>, coefficients: KWeightingCoefficients
    ) {
        switch kind {
        case .int16:
            KWeightingKernel.quad(samples.assumingMemoryBound(to: Int16.self), frames: frames, channels: channels, first: first,
                                  memory: memory, coefficients: coefficients, FusedArithmetic.self)
        case .int32:
            KWeightingKernel.quad(samples.assumingMemoryBound(to: Int32.self), frames: frames, channels: channels, first: first,
                                  memory: memory, coefficients: coefficients, FusedArithmetic.self)
        case .float:
            KWeightingKernel.quad(samples.assumingMemoryBound(to: Float.self), frames: frames, channels: channels, first: first,
                                  memory: memory, coefficients: coefficients, FusedArithmetic.self)
        }
    }

    /// `TruePeakKernel.largestOutput` with fused arithmetic.
    @inline(never)
    public static func truePeakLargestOutput(_ line: UnsafePointer<Float>, count: Int, stride: Int,
                                             filter: UnsafePointer<SIMD8<Float>>) -> Float {
        TruePeakKernel.largestOutput(line, count: count, stride: stride, filter: filter, FusedArithmetic.self)
    }
}
