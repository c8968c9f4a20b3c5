import AudioFormat

/// Sound-activated recording (`--start-above`, `--stop-after`, `--split-on-silence`, `--pre-roll`):
/// the microphone is open from the start, but audio is written only from just before the level
/// first rises above `startAboveDBFS`, and, with the silence options, until it has stayed below
/// for a while.
///
/// Levels are judged per block of `blockSeconds`: the RMS of the block's loudest channel, in dBFS
/// (the status line's RMS, over a shorter window). A block above `startAboveDBFS` is sound and
/// starts a segment; once recording, a block counts as silence only below `startAboveDBFS −
/// hysteresisDecibels`, so a voice hovering at the level does not chop the recording up.
public struct SoundActivation: Sendable, Equatable {
    /// A block louder than this (dBFS) starts a segment.
    public var startAboveDBFS: Double
    /// End the recording after this much silence (once something was recorded); nil: never.
    public var stopAfterSeconds: Double?
    /// Finish the file after this much silence and start a new one with the next sound; nil: one
    /// file (with `stopAfterSeconds`, which must then be longer, the recording still ends).
    public var splitOnSilenceSeconds: Double?
    /// Audio kept from before the block that crossed the level, so a first syllable is never cut.
    public var preRollSeconds: Double

    /// Half a second: a breath and the onset of a first word; the ring grows to hold any pre-roll.
    public static let defaultPreRollSeconds = 0.5
    /// The block over which a level is judged: 50 ms, a syllable's scale. Shorter blocks trigger on
    /// clicks; longer ones delay the decision (not the audio: the pre-roll covers it).
    public static let blockSeconds = 0.05
    /// How far below the start level a block must fall to count as silence while recording.
    public static let hysteresisDecibels = 3.0

    public init(startAboveDBFS: Double, stopAfterSeconds: Double? = nil, splitOnSilenceSeconds: Double? = nil,
                preRollSeconds: Double = SoundActivation.defaultPreRollSeconds) {
        self.startAboveDBFS = startAboveDBFS
        self.stopAfterSeconds = stopAfterSeconds
        self.splitOnSilenceSeconds = splitOnSilenceSeconds
        self.preRollSeconds = preRollSeconds
    }

    /// Frames per level block at `format`'s rate.
    func blockFrames(_ format: PCMFormat) -> Int { max(1, format.frames(forSeconds: Self.blockSeconds)) }

    /// Frames an armed output keeps in its ring: the pre-roll, plus the block before the one that
    /// crossed the level (a sound that starts late in a block may not lift that block's RMS over
    /// the level; the next block then starts the segment, and this keeps the pre-roll whole
    /// before the sound itself).
    func heldFrames(_ format: PCMFormat) -> Int { format.frames(forSeconds: preRollSeconds) + blockFrames(format) }
}

/// The decisions of sound-activated recording, one level block at a time. Pure state: the encoder
/// loop feeds it each block's level and acts on the answer (`SoundGatedDrain`).
struct SoundGate {
    enum Decision: Equatable {
        /// Nothing to write: still waiting for sound.
        case stayArmed
        /// Sound: write the held pre-roll, then this block.
        case startSegment
        /// Write this block; the segment goes on.
        case continueSegment
        /// Write this block, then finish the segment's file and wait for sound again.
        case endSegmentAfterBlock
        /// Write this block (when recording), then end the output: silence lasted `--stop-after`.
        case stopAfterBlock
    }

    private let startLevel: Double
    private let silenceLevel: Double
    private let splitFrames: Int?
    private let stopFrames: Int?
    private(set) var isRecording = false
    /// Frames of silence since the last block of sound; counted only once something was recorded,
    /// as waiting for the first sound is what arming is for.
    private var silentFrames = 0
    private var hasRecorded = false

    init(_ activation: SoundActivation, sampleRate: Int) {
        startLevel = activation.startAboveDBFS
        silenceLevel = activation.startAboveDBFS - SoundActivation.hysteresisDecibels
        splitFrames = activation.splitOnSilenceSeconds.map { max(1, Int(($0 * Double(sampleRate)).rounded())) }
        stopFrames = activation.stopAfterSeconds.map { max(1, Int(($0 * Double(sampleRate)).rounded())) }
    }

    /// The decision for a block of `frames` frames whose loudest channel's RMS is `level` dBFS.
    mutating func decide(level: Double, frames: Int) -> Decision {
        if !isRecording {
            if level > startLevel {
                isRecording = true
                hasRecorded = true
                silentFrames = 0
                return .startSegment
            }
            guard hasRecorded else { return .stayArmed }
            silentFrames += frames
            if let stopFrames, silentFrames >= stopFrames { return .stopAfterBlock }
            return .stayArmed
        }
        silentFrames = level < silenceLevel ? silentFrames + frames : 0
        // With both, the split comes first (`--stop-after` must be the longer): the file is finished,
        // and the silence goes on counting while armed.
        if let splitFrames, silentFrames >= splitFrames {
            isRecording = false
            return .endSegmentAfterBlock
        }
        if let stopFrames, silentFrames >= stopFrames {
            isRecording = false
            return .stopAfterBlock
        }
        return .continueSegment
    }
}
