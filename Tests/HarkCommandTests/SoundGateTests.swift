import AudioFormat
@testable import Recorder
import Testing

/// `SoundGate`'s decisions on sequences of block levels: start above the level, hysteresis, the
/// split and stop windows, and waiting for the first sound with no limit.
@Suite struct SoundGateTests {
    /// 10 frames a block at 100 Hz: 0.1 s blocks, so the windows below are whole blocks.
    func decisions(_ activation: SoundActivation, _ levels: [Double]) -> [SoundGate.Decision] {
        var gate = SoundGate(activation, sampleRate: 100)
        return levels.map { gate.decide(level: $0, frames: 10) }
    }

    @Test func startsOnlyAboveTheLevelAndWaitsForeverBeforeTheFirstSound() {
        let activation = SoundActivation(startAboveDBFS: -40, stopAfterSeconds: 0.2)
        #expect(decisions(activation, [-60, -40, -41, -70, -70, -70, -39.9]) ==
                [.stayArmed, .stayArmed, .stayArmed, .stayArmed, .stayArmed, .stayArmed, .startSegment])
    }

    @Test func aLevelWithinTheHysteresisKeepsRecording() {
        // −42 is under the start level but within 3 dB of it: still sound, not silence.
        let activation = SoundActivation(startAboveDBFS: -40, stopAfterSeconds: 0.2)
        #expect(decisions(activation, [-30, -42, -42.9, -42, -43.1, -50]) ==
                [.startSegment, .continueSegment, .continueSegment, .continueSegment, .continueSegment, .stopAfterBlock])
    }

    @Test func soundInsideTheWindowStartsItAgain() {
        let activation = SoundActivation(startAboveDBFS: -40, splitOnSilenceSeconds: 0.3)
        #expect(decisions(activation, [-30, -60, -60, -30, -60, -60, -60, -60, -30]) ==
                [.startSegment, .continueSegment, .continueSegment, .continueSegment,
                 .continueSegment, .continueSegment, .endSegmentAfterBlock, .stayArmed, .startSegment])
    }

    @Test func withBothTheFileIsSplitFirstAndTheSilenceGoesOnCountingWhileArmed() {
        let activation = SoundActivation(startAboveDBFS: -40, stopAfterSeconds: 0.5, splitOnSilenceSeconds: 0.2)
        #expect(decisions(activation, [-30, -60, -60, -60, -60, -60]) ==
                [.startSegment, .continueSegment, .endSegmentAfterBlock, .stayArmed, .stayArmed, .stopAfterBlock])
    }

    @Test func heldFramesArePreRollPlusABlock() {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        #expect(SoundActivation(startAboveDBFS: -40).heldFrames(format) == 24_000 + 2_400)
        #expect(SoundActivation(startAboveDBFS: -40, preRollSeconds: 0).heldFrames(format) == 2_400)
    }
}
