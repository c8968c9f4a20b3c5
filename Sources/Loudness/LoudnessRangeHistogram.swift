#if canImport(Glibc)
import Glibc
#endif

/// Loudness range (EBU Tech 3342) from short-term loudness taken every 100 ms, in fixed memory.
///
/// Why hark computes it rather than libebur128: libebur128 1.2.6 takes a short-term (3 s) value
/// only once a second (`EBUR128_ADD_FRAMES` restarts `short_term_frame_counter` at 2 s after each
/// one), the 2 s overlap of Tech 3342's first version; its 2016 version asks for at least 10 Hz
/// (2.9 s overlap), as FFmpeg's `ebur128` filter takes them. On minute-long speech-like test
/// signals libebur128's range differed from FFmpeg's by up to 0.2 LU where 10 Hz agreed within
/// 0.04 LU, and a signal that repeats every 2 s is seen at only two of its phases. (On Tech 3342's
/// own test cases all three agree.) Leaving libebur128's range out also saves the 3 s audio buffer
/// it needs (1.8 MiB for 48 kHz stereo).
///
/// How: `LoudnessMeter` adds the energy of every 100 ms step of the stream (K-weighted and
/// channel-weighted like the gating blocks, `KWeightingFilter`). The energies of the last 30 steps are kept in a ring, and their mean is the 3 s
/// short-term energy. Each short-term value at or above the absolute gate (−70 LUFS) is counted in
/// a histogram of 0.01 LU bins from −70 to +30 LUFS (louder values in the top bin) and its energy
/// added to a sum for the relative gate. The range is then Tech 3342's: the relative gate is 20 LU
/// below the mean energy of the counted values, and the range is the difference between the 95th
/// and the 10th percentile of the values above it (nearest rank, ranked as libebur128 ranks them).
/// Bin centres stand for the values, so the range is within 0.01 LU of an exact computation.
///
/// Memory: 30 doubles and 10,000 32-bit counts (about 40 KiB), allocated in `init`; `addStep`
/// and `reset` allocate nothing. Not synchronised: it belongs to its meter's thread. A count
/// would wrap after 13 years of one recording.
struct LoudnessRangeHistogram: ~Copyable {
    /// A short-term window is 30 steps of 100 ms.
    static let stepsPerWindow = 30
    static let binsPerLU = 100
    /// The absolute gate, and the bottom of the lowest bin.
    static let absoluteGate = -70.0
    /// −70 to +30 LUFS.
    static let binCount = 100 * binsPerLU

    /// The last `stepsPerWindow` step energies; step `n` is at `n % stepsPerWindow`.
    private let steps: UnsafeMutablePointer<Double>
    private let bins: UnsafeMutablePointer<UInt32>
    /// Steps added since `init` or `reset`.
    private var stepCount = 0
    /// Sum of the energies of the counted short-term values, and how many there are.
    private var countedEnergy = 0.0
    private var counted = 0

    init() {
        steps = .allocate(capacity: Self.stepsPerWindow)
        steps.initialize(repeating: 0, count: Self.stepsPerWindow)
        bins = .allocate(capacity: Self.binCount)
        bins.initialize(repeating: 0, count: Self.binCount)
    }

    deinit {
        steps.deallocate()
        bins.deallocate()
    }

    /// Forgets everything measured, without allocating.
    mutating func reset() {
        steps.update(repeating: 0, count: Self.stepsPerWindow)
        bins.update(repeating: 0, count: Self.binCount)
        stepCount = 0
        countedEnergy = 0
        counted = 0
    }

    /// Adds the next 100 ms step, given its energy (K-weighted, channel-weighted mean square; 0
    /// for silence); from the 30th step on, each step completes a short-term window. Real-time safe.
    mutating func addStep(energy stepEnergy: Double) {
        steps[stepCount % Self.stepsPerWindow] = stepEnergy
        stepCount += 1
        guard stepCount >= Self.stepsPerWindow else { return }
        var sum = 0.0
        for index in 0..<Self.stepsPerWindow {
            sum += steps[index]
        }
        let energy = sum / Double(Self.stepsPerWindow)
        let shortTerm = Self.loudness(ofEnergy: energy)
        guard shortTerm >= Self.absoluteGate else { return }
        bins[Self.bin(of: shortTerm)] &+= 1
        countedEnergy += energy
        counted += 1
    }

    /// A read-only view for `loudnessRange(of:)`, valid while the histogram lives and nothing
    /// adds to it.
    struct Counts {
        let bins: UnsafePointer<UInt32>
        let energy: Double
        let count: Int
    }

    var counts: Counts { Counts(bins: UnsafePointer(bins), energy: countedEnergy, count: counted) }

    /// Tech 3342's loudness range of the short-term values of all of `parts` taken together (the
    /// files of one split recording), in LU; nil when no short-term value passed the gates (under
    /// 3 s of audio, or silence).
    static func loudnessRange(of parts: [Counts]) -> Double? {
        let count = parts.reduce(0) { $0 + $1.count }
        guard count > 0 else { return nil }
        let relativeGate = loudness(ofEnergy: parts.reduce(0) { $0 + $1.energy } / Double(count)) - 20
        // The first bin whose centre, absoluteGate + (bin + 0.5) / binsPerLU, is at or above the gate.
        let firstBin = min(binCount - 1,
                           max(0, Int(((relativeGate - absoluteGate) * Double(binsPerLU) - 0.5).rounded(.up))))
        func total(inBin bin: Int) -> Int { parts.reduce(0) { $0 + Int($1.bins[bin]) } }
        var above = 0
        for bin in firstBin..<binCount {
            above += total(inBin: bin)
        }
        guard above > 0 else { return nil }
        let lowRank = Int(Double(above - 1) * 0.10 + 0.5)
        let highRank = Int(Double(above - 1) * 0.95 + 0.5)
        var seen = 0
        var lowBin: Int?
        for bin in firstBin..<binCount {
            seen += total(inBin: bin)
            if lowBin == nil, seen > lowRank { lowBin = bin }
            if seen > highRank, let lowBin { return Double(bin - lowBin) / Double(binsPerLU) }
        }
        return nil  // Not reached: `seen` ends at `above`, which exceeds `highRank`.
    }

    /// BS.1770's loudness of a (K-weighted, channel-weighted mean-square) energy, in LUFS.
    static func loudness(ofEnergy energy: Double) -> Double {
        10 * log10(energy) - 0.691
    }

    static func energy(ofLoudness loudness: Double) -> Double {
        pow(10, (loudness + 0.691) / 10)
    }

    static func bin(of loudness: Double) -> Int {
        bin(of: loudness, bottom: absoluteGate, binsPerLU: binsPerLU, binCount: binCount)
    }

    /// The bin of `loudness` among `binCount` bins of 1/`binsPerLU` LU from `bottom` up, louder
    /// values in the top bin, quieter in the bottom one.
    static func bin(of loudness: Double, bottom: Double, binsPerLU: Int, binCount: Int) -> Int {
        min(binCount - 1, max(0, Int(((loudness - bottom) * Double(binsPerLU)).rounded(.down))))
    }
}
