import CCPU
import LoudnessKernels
#if canImport(LoudnessKernelsAVX2)
import LoudnessKernelsAVX2
#endif

/// Which build of the meter's two inner loops (`KWeightingKernel`, `TruePeakKernel`) a meter runs.
///
/// hark is built for the x86-64 baseline (SSE2), so that one binary runs on every 64-bit PC. There
/// the K-weighting filter's feedback costs a multiply and a subtract per sample, whose latency
/// bounds the loop; a fused multiply-add halves it, and AVX2 doubles the true-peak filter's lanes.
/// So on x86-64 the loops are compiled a second time, for AVX2 with FMA (`LoudnessKernelsAVX2`),
/// and a meter takes that build where the processor has both: the meter's CPU 0.266 → 0.149 ms per
/// second of 48 kHz stereo, 2.59 → 0.96 for 8 channels at 192 kHz (docs/performance.md).
///
/// The two builds round differently (a fused multiply-add rounds once): their integrated loudness
/// agrees within 1e-9 LU (about 1e-14 in the tests' signals), far below the 0.01 LU a tag prints,
/// and each build on its own gives the same result however the audio is cut into calls
/// (LoudnessKernelTests, KWeightingFilterTests, TruePeakMeterTests).
///
/// Chosen by the host a package is built on: `Package.swift` adds the AVX2 module when the
/// manifest runs on x86-64, so a cross-build from another architecture leaves it out, and one
/// from x86-64 to another would need that condition changed.
public enum LoudnessKernelChoice: Sendable, Equatable, CustomStringConvertible {
    /// Multiply, then add: every x86-64 and arm64 processor.
    case portable
    /// Fused multiply-adds in AVX2 registers: x86-64 processors with AVX2 and FMA (from 2013–2015).
    case avx2FMA

    /// The fastest this processor runs; found once.
    public static let fastest: LoudnessKernelChoice = available.last ?? .portable

    /// Every choice this processor runs, portable first: what the tests compare.
    public static let available: [LoudnessKernelChoice] = {
        #if canImport(LoudnessKernelsAVX2)
        return hark_cpu_has_avx2_and_fma() != 0 ? [.portable, .avx2FMA] : [.portable]
        #else
        return [.portable]
        #endif
    }()

    public var description: String {
        switch self {
        case .portable: "portable"
        case .avx2FMA: "AVX2+FMA"
        }
    }
}
