import LoudnessKernels

/// The loudness meter's two inner loops compiled for AVX2 with FMA (this module's build flags,
/// Package.swift): the K-weighting filter's feedback in fused multiply-adds, the true-peak filter
/// eight lanes to a register. Measured on the development machine (release build, 48 kHz stereo
/// music-like S16, 500 ms calls, `/tmp` harness over `Sources/Loudness`, 2026-11-25): the
/// K-weighting 0.165 → 0.086 ms of CPU per second of audio, the whole meter 0.26 → 0.155.
///
/// Nothing here may run on a processor without AVX2 and FMA: it would stop with SIGILL. So every
/// entry point is `@inline(never)` (its body, compiled here, is never copied into a caller compiled
/// for the baseline, nor the reverse), this module defines no type with stored state or global
/// that could run code on its own, and `Loudness` calls in only after `LoudnessKernelChoice`
/// has found both features (CPUID, and the OS saving the AVX registers).
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
    public static func truePeakLargestOutput(_ line: UnsafePointer<Float>, count: Int, filter: UnsafePointer<SIMD8<Float>>) -> Float {
        TruePeakKernel.largestOutput(line, count: count, filter: filter, FusedArithmetic.self)
    }
}
