#if canImport(Glibc)
import Glibc
#endif

/// Integrated loudness (ITU-R BS.1770-4 §5.1) from 100 ms step energies, in fixed memory.
///
/// BS.1770's gating blocks are 400 ms long and start every 100 ms (75 % overlap), so each block is
/// the mean of four consecutive 100 ms steps' energies (K-weighted, channel-weighted mean squares,
/// all steps the same length): `addStep` keeps the last four and forms a block from the fourth
/// step on, as libebur128 and FFmpeg form them. A block at or above the absolute gate (−70 LUFS)
/// is counted in a histogram of 0.1 LU bins from −70 to +30 LUFS (louder blocks in the top bin),
/// and its energy is added to its bin's sum.
///
/// The result: the relative gate is 10 LU below the mean energy of the counted blocks (from the
/// blocks' own energies, not their bins'); the integrated loudness is the mean energy of the
/// blocks in the bins whose centre is at or above that gate. Only a block within 0.05 LU of the
/// gate can be gated otherwise than by an unbinned computation, and each such block moves the
/// result by at most about 3.9 / (n − 1) LU for n blocks gated in: 0.04 LU over 10 s, 0.01 LU over
/// 40 s (a block at the gate holds a tenth of the mean energy). libebur128's histogram mode, which
/// hark used before, gated by the same rule and also counted every block at its bin's centre
/// energy.
///
/// Memory: 1,000 counts and energy sums (12 KiB), allocated in `init`; `addStep` and `reset`
/// allocate nothing. Not synchronised: it belongs to its meter's thread. A count would wrap after
/// 13 years of one recording.
struct GatingBlockHistogram: ~Copyable {
    static let stepsPerBlock = 4
    static let binsPerLU = 10
    /// The absolute gate, and the bottom of the lowest bin.
    static let absoluteGate = -70.0
    /// −70 to +30 LUFS.
    static let binCount = 100 * binsPerLU
    /// The absolute gate as an energy, 10^((−70 + 0.691) / 10), as a literal: a global with a
    /// literal value is set at load time, so `addStep` never runs a one-time initialisation on the
    /// measuring thread (`gateEnergyIsTheAbsoluteGate` checks the value). (Computed into an
    /// instance property instead, it made Swift 6.3.1 crash compiling this file with `-O` under
    /// ThreadSanitizer: "Invalid bitcast".)
    static let absoluteGateEnergy = 1.1724653045822981e-07

    private let counts: UnsafeMutablePointer<UInt32>
    private let energies: UnsafeMutablePointer<Double>
    /// The last four step energies, step `n` at `n % 4`.
    private let lastSteps: UnsafeMutablePointer<Double>
    private var stepCount = 0

    init() {
        counts = .allocate(capacity: Self.binCount)
        counts.initialize(repeating: 0, count: Self.binCount)
        energies = .allocate(capacity: Self.binCount)
        energies.initialize(repeating: 0, count: Self.binCount)
        lastSteps = .allocate(capacity: Self.stepsPerBlock)
        lastSteps.initialize(repeating: 0, count: Self.stepsPerBlock)
    }

    deinit {
        counts.deallocate()
        energies.deallocate()
        lastSteps.deallocate()
    }

    /// Forgets every block, without allocating.
    mutating func reset() {
        counts.update(repeating: 0, count: Self.binCount)
        energies.update(repeating: 0, count: Self.binCount)
        lastSteps.update(repeating: 0, count: Self.stepsPerBlock)
        stepCount = 0
    }

    /// Adds the next 100 ms step's energy; from the fourth step on, each step completes a block.
    /// Real-time safe.
    mutating func addStep(energy: Double) {
        lastSteps[stepCount % Self.stepsPerBlock] = energy
        stepCount += 1
        guard stepCount >= Self.stepsPerBlock else { return }
        let block = (lastSteps[0] + lastSteps[1] + lastSteps[2] + lastSteps[3]) / Double(Self.stepsPerBlock)
        guard block >= Self.absoluteGateEnergy else { return }
        let bin = LoudnessRangeHistogram.bin(of: LoudnessRangeHistogram.loudness(ofEnergy: block),
                                             bottom: Self.absoluteGate, binsPerLU: Self.binsPerLU, binCount: Self.binCount)
        counts[bin] &+= 1
        energies[bin] += block
    }

    /// A read-only view for `integratedLoudness(of:)`, valid while the histogram lives and
    /// nothing adds to it.
    struct Blocks {
        let counts: UnsafePointer<UInt32>
        let energies: UnsafePointer<Double>
    }

    var blocks: Blocks { Blocks(counts: UnsafePointer(counts), energies: UnsafePointer(energies)) }

    /// The integrated loudness of the blocks of all of `parts` taken together (the files of one
    /// split recording), in LUFS; nil when no block passed the absolute gate (silence, or under
    /// 400 ms of audio).
    static func integratedLoudness(of parts: [Blocks]) -> Double? {
        var count = 0
        var energy = 0.0
        for part in parts {
            for bin in 0..<binCount {
                count += Int(part.counts[bin])
                energy += part.energies[bin]
            }
        }
        guard count > 0 else { return nil }
        let relativeGate = LoudnessRangeHistogram.loudness(ofEnergy: energy / Double(count)) - 10
        // The first bin whose centre, absoluteGate + (bin + 0.5) / binsPerLU, is at or above the gate.
        let firstBin = min(binCount - 1,
                           max(0, Int(((relativeGate - absoluteGate) * Double(binsPerLU) - 0.5).rounded(.up))))
        var gatedCount = 0
        var gatedEnergy = 0.0
        for part in parts {
            for bin in firstBin..<binCount {
                gatedCount += Int(part.counts[bin])
                gatedEnergy += part.energies[bin]
            }
        }
        // The loudest block is always above a gate 10 LU under the mean, so this is never empty.
        guard gatedCount > 0 else { return nil }
        return LoudnessRangeHistogram.loudness(ofEnergy: gatedEnergy / Double(gatedCount))
    }
}
