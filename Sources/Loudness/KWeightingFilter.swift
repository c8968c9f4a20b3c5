#if canImport(Glibc)
import Glibc
#endif
import LoudnessKernels
#if canImport(LoudnessKernelsAVX2)
import LoudnessKernelsAVX2
#endif

/// ITU-R BS.1770-4's K-weighting of interleaved audio, and the sum of squares of what comes out,
/// channel by channel: the part of a loudness measurement that touches every sample.
///
/// The filter is the Recommendation's two stages, a high shelf (+4 dB above about 1.7 kHz, the
/// head's effect) and the RLB high-pass (about 38 Hz), for any sample rate: the analogue
/// prototypes' frequencies, gain and Q taken through the bilinear transform as libebur128
/// computes them (`ebur128_init_filter`, 1.2.6), which at 48 kHz gives BS.1770-4's Table 1 and 2
/// coefficients to the last digit printed there.
///
/// Why hark's own rather than libebur128's `ebur128_add_frames_*`: those ran the two stages as one
/// fourth-order filter whose state lives behind pointers the compiler must reload and store for
/// every sample, 0.70 ms of CPU per second of 48 kHz stereo here; this runs them in registers,
/// two channels in the lanes of one vector, in 0.17 ms (release build, 125 ms calls; `/tmp`
/// harness, 2026-11-24). That difference was most of what put a FLAC recording above
/// `arecord | flac -5 -` in CPU (#16). One pair's loop is bound by its feedback's latency (a
/// multiply and a subtract per sample), not by arithmetic, so from three channels on the lanes are
/// four: two vectors whose chains the processor runs side by side. Eight channels at 192 kHz went
/// from 2.75 to 1.69 ms of CPU per second of audio (2026-11-25; eight lanes spill registers and
/// took 1.90).
///
/// Arithmetic: `Double`, direct form I per stage (each stage's own input and output history, which
/// keeps the low-frequency pole of the high-pass accurate). The sums are per channel in the order
/// the frames come, so the result does not depend on how the audio is cut into calls. The loop is
/// `KWeightingKernel`, built twice (`LoudnessKernelChoice`): the portable build rounds every value
/// as `(b0·x + b1·x1 + b2·x2 − a2·y2) − a1·y1` written out does; where the processor has AVX2 and
/// FMA, the feedback runs as fused multiply-adds and a group of four is one register, about half
/// the time (`AVX2Kernels`).
///
/// Denormals: after a loud passage followed by digital silence the state decays towards zero and
/// reaches subnormal numbers, which cost a hundred times more per operation: the shelf's after
/// about 95 ms at any rate (its poles' radius is 0.856 a sample at 48 kHz), the high-pass's after
/// seconds. `takeWeightedSum` sets state below 1e-20 (400 dB below full scale) to zero every
/// 100 ms of the stream. The shelf's state falls under 1e-20 about 6 ms into silence, so a flush
/// later than that zeroes it; one sooner leaves it until the next, by when it has run about
/// 10 ms on subnormal numbers at most: microseconds of CPU once per silence. (The flush follows
/// the stream's steps, not the calls, so the result does not depend on how the audio is cut.)
///
/// Memory: 56 bytes per lane (a pair has two, a group four), allocated in `init`; `add`,
/// `takeWeightedSum` and `reset` allocate nothing. Not synchronised: it belongs to its meter's
/// thread.
struct KWeightingFilter: ~Copyable {
    typealias Coefficients = KWeightingCoefficients

    /// The lowest rate the filter is defined for: the shelf's frequency must lie below Nyquist.
    static let lowestSampleRate = 3_400

    let channels: Int
    let coefficients: Coefficients
    /// Which build of the loop runs (`LoudnessKernelChoice`).
    let kernels: LoudnessKernelChoice
    /// Channels in groups filtered together, one lane per channel: groups of four while three or
    /// more channels are left (two SSE vectors, two independent chains the processor overlaps; one
    /// register in the AVX2 build), then one pair. Stereo stays one pair: four lanes would double
    /// its work for no overlap it lacks.
    /// A group's lanes past the last channel repeat it and are never summed.
    private let groups: [Group]
    /// Per group, `slots` vectors of its lane count: the shelf's last two inputs and outputs, the
    /// high-pass's last two outputs, the sum of squared outputs since the last `takeWeightedSum`.
    /// 32-byte aligned, so that every group's vectors are aligned whatever their width.
    private let memory: UnsafeMutableRawPointer
    private let memoryBytes: Int
    private static var slots: Int { KWeightingKernel.slots }
    private static var sumSlot: Int { KWeightingKernel.sumSlot }

    /// Channels `first..<first + lanes` (clamped to the last channel), with their state from
    /// byte `offset` of `memory`.
    private struct Group {
        var first: Int
        var lanes: Int
        var offset: Int
    }

    init(channels: Int, sampleRate: Int, kernels: LoudnessKernelChoice = .fastest) {
        precondition(channels > 0 && sampleRate >= Self.lowestSampleRate)
        self.channels = channels
        self.kernels = kernels
        self.coefficients = Coefficients(sampleRate: sampleRate)
        var groups: [Group] = []
        var first = 0, offset = 0
        while first < channels {
            let lanes = channels - first >= 3 ? 4 : 2
            groups.append(Group(first: first, lanes: lanes, offset: offset))
            first += lanes
            offset += Self.slots * lanes * MemoryLayout<Double>.stride
        }
        self.groups = groups
        memoryBytes = offset
        memory = .allocate(byteCount: offset, alignment: 32)
        memory.initializeMemory(as: Double.self, repeating: 0, count: offset / MemoryLayout<Double>.stride)
    }

    deinit { memory.deallocate() }

    /// Forgets the filters' state and the sums.
    mutating func reset() {
        memory.initializeMemory(as: Double.self, repeating: 0, count: memoryBytes / MemoryLayout<Double>.stride)
    }

    /// Filters `frames` interleaved frames and adds each channel's squared outputs to its sum.
    /// Real-time safe: no allocation, no locks, no system calls.
    @inline(__always)
    mutating func add<Sample: MeasuredSample>(_ samples: UnsafePointer<Sample>, frames: Int) {
        for group in groups {
            let state = memory + group.offset
            if group.lanes == 4 {
                let lanes = state.assumingMemoryBound(to: SIMD4<Double>.self)
                switch kernels {
                case .portable:
                    KWeightingKernel.quad(samples, frames: frames, channels: channels, first: group.first,
                                          memory: lanes, coefficients: coefficients, PortableArithmetic.self)
                case .avx2FMA:
                    #if canImport(LoudnessKernelsAVX2)
                    AVX2Kernels.kWeightingQuad(samples, kind: Sample.kind, frames: frames, channels: channels, first: group.first,
                                               memory: lanes, coefficients: coefficients)
                    #else
                    preconditionFailure("KWeightingFilter: no AVX2 kernels in this build")
                    #endif
                }
            } else {
                let lanes = state.assumingMemoryBound(to: SIMD2<Double>.self)
                switch kernels {
                case .portable:
                    KWeightingKernel.pair(samples, frames: frames, channels: channels, first: group.first,
                                          memory: lanes, coefficients: coefficients, PortableArithmetic.self)
                case .avx2FMA:
                    #if canImport(LoudnessKernelsAVX2)
                    AVX2Kernels.kWeightingPair(samples, kind: Sample.kind, frames: frames, channels: channels, first: group.first,
                                               memory: lanes, coefficients: coefficients)
                    #else
                    preconditionFailure("KWeightingFilter: no AVX2 kernels in this build")
                    #endif
                }
            }
        }
    }

    /// Σ weight[c] × sum[c] over the channels, where sum[c] is channel c's sum of squared outputs
    /// since the last call; clears the sums and flushes near-zero state (see the type's comment).
    /// `weights` has `channels` values.
    mutating func takeWeightedSum(weights: UnsafePointer<Double>) -> Double {
        var total = 0.0
        for group in groups {
            let values = (memory + group.offset).assumingMemoryBound(to: Double.self)
            let sums = values + Self.sumSlot * group.lanes
            for lane in 0..<group.lanes where group.first + lane < channels {
                total += weights[group.first + lane] * sums[lane]
            }
            sums.update(repeating: 0, count: group.lanes)
            for index in 0..<(Self.sumSlot * group.lanes) where abs(values[index]) < 1e-20 {
                values[index] = 0
            }
        }
        return total
    }
}

extension KWeightingCoefficients {
    /// BS.1770-4's two stages at `sampleRate`, as libebur128 computes them (see `KWeightingFilter`).
    init(sampleRate: Int) {
        let rate = Double(sampleRate)
        // The high shelf: BS.1770-4's first stage as an analogue prototype.
        let shelfFrequency = 1681.974450955533
        let shelfGain = 3.999843853973347
        let shelfQ = 0.7071752369554196
        var k = tan(Double.pi * shelfFrequency / rate)
        let vh = pow(10.0, shelfGain / 20.0)
        let vb = pow(vh, 0.4996667741545416)
        let a0 = 1.0 + k / shelfQ + k * k
        let shelf = (b0: (vh + vb * k / shelfQ + k * k) / a0, b1: 2.0 * (k * k - vh) / a0,
                     b2: (vh - vb * k / shelfQ + k * k) / a0, a1: 2.0 * (k * k - 1.0) / a0, a2: (1.0 - k / shelfQ + k * k) / a0)
        // The RLB high-pass.
        let highPassFrequency = 38.13547087602444
        let highPassQ = 0.5003270373238773
        k = tan(Double.pi * highPassFrequency / rate)
        let b0 = 1.0 + k / highPassQ + k * k
        self.init(shelfB0: shelf.b0, shelfB1: shelf.b1, shelfB2: shelf.b2, shelfA1: shelf.a1, shelfA2: shelf.a2,
                  highPassA1: 2.0 * (k * k - 1.0) / b0, highPassA2: (1.0 - k / highPassQ + k * k) / b0)
    }
}
