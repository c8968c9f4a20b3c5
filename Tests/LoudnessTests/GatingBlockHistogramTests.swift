import Testing
@testable import Loudness

/// The 400 ms blocks and both gates, fed step energies directly.
@Suite struct GatingBlockHistogramTests {
    static func energy(_ lufs: Double) -> Double { LoudnessRangeHistogram.energy(ofLoudness: lufs) }

    /// The literal absolute gate is −70 LUFS to the last bit.
    @Test func gateEnergyIsTheAbsoluteGate() {
        #expect(GatingBlockHistogram.absoluteGateEnergy == Self.energy(GatingBlockHistogram.absoluteGate))
    }

    /// Three steps make no block; the fourth makes the first; each step after it one more.
    @Test func aBlockIsFourStepsAndOneMoreEachStep() {
        var blocks = GatingBlockHistogram()
        for _ in 0..<3 { blocks.addStep(energy: Self.energy(-20)) }
        #expect(GatingBlockHistogram.integratedLoudness(of: [blocks.blocks]) == nil)
        blocks.addStep(energy: Self.energy(-20))
        let one = GatingBlockHistogram.integratedLoudness(of: [blocks.blocks])
        #expect(abs((one ?? 0) + 20) < 1e-9)
        // Four silent steps: blocks of 3/4, 1/2, 1/4 and none of the level, the last under the
        // absolute gate, the first three above the relative one.
        for _ in 0..<4 { blocks.addStep(energy: 0) }
        let expected = LoudnessRangeHistogram.loudness(ofEnergy: Self.energy(-20) * (1 + 0.75 + 0.5 + 0.25) / 4)
        let pooled = GatingBlockHistogram.integratedLoudness(of: [blocks.blocks])
        #expect(abs((pooled ?? 0) - expected) < 1e-9, "\(String(describing: pooled)) against \(expected)")
    }

    /// BS.1770-4 §5.1 written out plainly over a list of blocks, as the reference.
    static func reference(steps: [Double]) -> Double? {
        guard steps.count >= 4 else { return nil }
        let blocks: [Double] = (3..<steps.count).map { (end: Int) -> Double in
            let sum: Double = steps[end - 3] + steps[end - 2] + steps[end - 1] + steps[end]
            return sum / 4
        }
        let aboveAbsolute = blocks.filter { $0 >= energy(-70) }
        guard !aboveAbsolute.isEmpty else { return nil }
        let relativeGate = LoudnessRangeHistogram.loudness(ofEnergy: aboveAbsolute.reduce(0, +) / Double(aboveAbsolute.count)) - 10
        let gated = aboveAbsolute.filter { LoudnessRangeHistogram.loudness(ofEnergy: $0) >= relativeGate }
        return LoudnessRangeHistogram.loudness(ofEnergy: gated.reduce(0, +) / Double(gated.count))
    }

    /// Loud, quiet (under the relative gate) and very quiet (under the absolute gate) stretches,
    /// with the blocks that straddle them: the same as the plain computation.
    @Test(arguments: [[-20.0, -45, -80], [-80.0, -30, -38, -60], [-23.0, -23, -33.5, -71, -69]])
    func bothGatesApplyAsWrittenOut(_ levels: [Double]) throws {
        var blocks = GatingBlockHistogram()
        var steps: [Double] = []
        for level in levels {
            for _ in 0..<37 {
                steps.append(Self.energy(level))
                blocks.addStep(energy: Self.energy(level))
            }
        }
        let result = try #require(GatingBlockHistogram.integratedLoudness(of: [blocks.blocks]))
        let expected = try #require(Self.reference(steps: steps))
        #expect(abs(result - expected) < 0.01, "\(levels): \(result) against \(expected)")
        // And the gates did something: the plain mean of every block differs.
        let everything = LoudnessRangeHistogram.loudness(ofEnergy: steps.reduce(0, +) / Double(steps.count))
        #expect(abs(everything - expected) > 0.1)
    }
}
