import AudioFormat
import CLinux
import Capture
import Encoding
import RecordPermission
import RingBuffer
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A segment of a sound-activated recording, as its output's encoder thread reports it when the
/// segment ends (for the access log).
public struct RecordedSegment: Sendable, Equatable {
    /// Its number, from 1.
    public let number: Int
    /// Where its first frame is in the capture, in frames since capture began.
    public let startFrame: Int
    /// When its first frame was captured (see `SoundGatedDrain.captureTime(ofFrame:)`).
    public let startTime: WallClockTime
    public let frames: Int
    /// The files it went into (several when `--max-file-time` split it), or the one stream it went
    /// into ("stdout", a FIFO's or a device's path).
    public let paths: [String]
    /// Whether silence ended it (else the recording's end did).
    public let endedOnSilence: Bool
}

/// How an encoder loop drains its ring when recording is sound-activated (`SoundActivation`).
///
/// The ring is read in two steps. Frames are first measured, a level block at a time (the
/// loudest channel's mean square, on the level meter's 0…32768 scale), and `SoundGate` decides
/// on each complete block. While armed, measured frames stay in the ring up to `heldFrames` (the
/// pre-roll and one block) and older ones are released unwritten: nothing is encoded or written.
/// When a block crosses the level, the held frames and the block are encoded, and from then on
/// frames are encoded as soon as they are measured (a block's decision only says whether the
/// segment ends after it), so a pipe's reader waits no longer than without sound activation.
///
/// The capture thread does nothing new: the lane's `heldFrames` tells it not to count the held
/// pre-roll when it decides whether to wake this thread. Encoder thread only, like its loop: no
/// allocation and no lock per period; a segment's start and end (a file, an access-log line) are
/// the splitter's and the callback's, a few times a minute at most.
final class SoundGatedDrain: @unchecked Sendable {
    private var gate: SoundGate
    private let format: PCMFormat
    private let blockFrames: Int
    /// Invariant while armed: at most this many measured frames are kept in the ring.
    private let heldLimit: Int
    /// Per channel: the sum of squared magnitudes over the block measured so far.
    private let squares: UnsafeMutablePointer<Int>
    /// Invariant: frames of the current block measured so far, under `blockFrames`.
    private var blockFill = 0
    /// Invariant: frames after the ring's read position that have been measured. While armed,
    /// these are the held frames; while recording, 0 (measured frames are encoded at once).
    private var measuredAhead = 0
    /// Frames of the capture before the ring's read position: ring frames consumed, plus the
    /// silence gaps passed (`--pad-overruns`). The capture's frame count at that position.
    private var captureFramesAtRead = 0
    private let splitter: SplittingEncoder?
    private let streamName: String
    /// When the device was opened (`RecordingSession.startTime`): frame 0's moment until the
    /// capture thread has taken the first sample's time.
    private let recordingStart: WallClockTime
    /// The capture's first-sample time (`CaptureClock`).
    private let monitor: CaptureMonitor
    /// The segment being written: its number, first frame and moment, and the number of files before it.
    private var openSegment: (number: Int, startFrame: Int, startTime: WallClockTime, framesAtStart: Int, filesBefore: Int)?

    /// Segments started so far. Written by the encoder thread, read by others (relaxed: a count
    /// for the summary and the status line, carrying no other data).
    let segmentsStarted = Atomic<Int>(0)
    /// Whether the output is waiting for sound (the status line's "armed"). Same rules.
    let isArmed = Atomic<Bool>(true)
    /// The loudest channel's level of the last complete block, in hundredths of a dB (for the
    /// status line while armed). Same rules.
    let lastBlockCentibels = Atomic<Int>(Int.min)
    /// Set once silence lasted `--stop-after`: the output has ended. Same rules.
    let stoppedOnSilence = Atomic<Bool>(false)
    /// Told each segment once it has ended, on the encoder thread. Set before the thread starts.
    var whenSegmentEnds: (@Sendable (RecordedSegment) -> Void)?

    /// `streamName` names an output without a splitter (standard output, a FIFO or a device
    /// written in place), whose segments go back to back into the one stream.
    init(_ activation: SoundActivation, format: PCMFormat, splitter: SplittingEncoder?, streamName: String,
         recordingStart: WallClockTime, monitor: CaptureMonitor) {
        self.streamName = streamName
        self.recordingStart = recordingStart
        self.monitor = monitor
        gate = SoundGate(activation, sampleRate: format.sampleRate)
        self.format = format
        blockFrames = activation.blockFrames(format)
        heldLimit = activation.heldFrames(format)
        squares = .allocate(capacity: format.channels)
        squares.initialize(repeating: 0, count: format.channels)
        self.splitter = splitter
    }

    deinit { squares.deallocate() }

    private var hasStopped: Bool { stoppedOnSilence.load(ordering: .relaxed) }

    /// The output's descriptor when it is a pipe or a socket, whose reader can go away while
    /// nothing is written to it (armed); -1 otherwise. Set before the encoder thread starts.
    var readerWatch: Int32 = -1

    /// Measures and, where the gate says so, encodes what the ring holds. While armed, a pipe's
    /// reader that has gone ends the output now, as a failed write would: nothing is written
    /// while armed, and the microphone would otherwise stay open for nobody until the next sound.
    func drain(_ loop: EncoderLoop) throws(EncoderError) {
        if readerWatch >= 0, !gate.isRecording, Self.readerHasGone(readerWatch) { throw .writeFailed(errno: EPIPE) }
        let ring = loop.ring
        while !hasStopped, !loop.sizeLimitReached.load(ordering: .relaxed) {
            // The ring's fill before the schedule (`EncoderLoop.nextGap` says why).
            let (gap, maxFrames) = loop.nextGap(afterFrames: loop.ringFramesConsumed)
            if let gap, gap.position == loop.ringFramesConsumed + measuredAhead {
                try passGap(frames: gap.frames, loop)
                loop.silence?.removeNext()
                continue
            }
            var measuredNew = false
            let consumed = try ring.withReadableRegions(maxFrames: maxFrames) { regions throws(EncoderError) -> Int in
                guard regions.frameCount > measuredAhead else { return 0 }
                measuredNew = true
                return try step(regions, loop)
            }
            loop.ringFramesConsumed += consumed
            captureFramesAtRead += consumed
            loop.lane.heldFrames.store(measuredAhead, ordering: .relaxed)
            if !measuredNew { return }
        }
    }

    /// Measures the frames after `measuredAhead`, acting on each completed block; returns the
    /// frames to consume (encoded, or released while armed).
    private func step(_ regions: RingRegions, _ loop: EncoderLoop) throws(EncoderError) -> Int {
        let available = regions.frameCount
        var position = measuredAhead
        var consumed = 0
        while position < available {
            let count = min(blockFrames - blockFill, available - position)
            let (first, second) = Self.frames(position..<(position + count), of: regions)
            measure(first)
            measure(second)
            loop.meter?.measure(first, second)
            position += count
            blockFill += count
            if gate.isRecording {
                guard try encode(first, second, loop) else { return endAtSizeLimit(loop, position) }
                consumed = position
            }
            guard blockFill == blockFrames else { break }
            blockFill = 0
            switch gate.decide(level: takeBlockLevel(), frames: blockFrames) {
            case .stayArmed, .continueSegment:
                break
            case .startSegment:
                let start = max(consumed, position - blockFrames - heldLimit)
                release(start - consumed)
                beginSegment(at: captureFramesAtRead + start, loop)
                let (held, heldWrapped) = Self.frames(start..<position, of: regions)
                guard try encode(held, heldWrapped, loop) else { return endAtSizeLimit(loop, position) }
                consumed = position
            case .endSegmentAfterBlock:
                try endSegment(loop)
            case .stopAfterBlock:
                try endSegment(loop)
                stop(loop)
                return position
            }
        }
        if !gate.isRecording {
            // Keep the pre-roll before the next block to be decided on; release the rest.
            let keepFrom = max(consumed, position - blockFill - heldLimit)
            release(keepFrom - consumed)
            consumed = keepFrom
        }
        measuredAhead = position - consumed
        return consumed
    }

    /// A gap of lost time (`--pad-overruns`): silence in a segment, and counted as silence;
    /// passed over while armed, with the held frames (the pre-roll does not reach across it).
    private func passGap(frames: Int, _ loop: EncoderLoop) throws(EncoderError) {
        squares.update(repeating: 0, count: format.channels)
        blockFill = 0
        if gate.isRecording {
            try loop.encodeSilence(frames: frames)
            switch gate.decide(level: -.infinity, frames: frames) {
            case .endSegmentAfterBlock: try endSegment(loop)
            case .stopAfterBlock: try endSegment(loop); stop(loop)
            default: break
            }
        } else {
            let held = measuredAhead
            _ = loop.ring.withReadableRegions(maxFrames: held) { _ in held }
            loop.ringFramesConsumed += held
            captureFramesAtRead += held
            loop.lane.heldFrames.store(0, ordering: .relaxed)
            release(held + frames)
            measuredAhead = 0
            if gate.decide(level: -.infinity, frames: frames) == .stopAfterBlock { stop(loop) }
        }
        captureFramesAtRead += frames
    }

    /// Encodes ring frames; false once the output reached its size limit and takes no more.
    private func encode(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
                        _ loop: EncoderLoop) throws(EncoderError) -> Bool {
        // Two calls, not a loop over an array of the two: an array literal would allocate.
        if !first.isEmpty, try loop.encodeFrames(first) < first.count / format.bytesPerFrame { return false }
        if !second.isEmpty, try loop.encodeFrames(second) < second.count / format.bytesPerFrame { return false }
        return true
    }

    /// The output reached its size limit within a step: it takes nothing more. Returns the frames
    /// to consume (all measured: nothing will read them).
    private func endAtSizeLimit(_ loop: EncoderLoop, _ position: Int) -> Int {
        loop.endAtSizeLimit()
        measuredAhead = 0
        return position
    }

    /// Frames passed over unwritten.
    private func release(_ frames: Int) {
        if frames > 0 { splitter?.skip(frames: frames) }
    }

    private func beginSegment(at captureFrame: Int, _ loop: EncoderLoop) {
        let number = segmentsStarted.load(ordering: .relaxed) + 1
        let startTime = captureTime(ofFrame: captureFrame)
        splitter?.beginSegment(capturedAt: startTime)
        openSegment = (number, captureFrame, startTime, loop.framesEncoded.load(ordering: .relaxed), splitter?.paths.count ?? 0)
        segmentsStarted.store(number, ordering: .relaxed)
        isArmed.store(false, ordering: .relaxed)
    }

    /// Whether the reading end of the pipe or socket `descriptor` is closed: poll() says POLLERR
    /// (a pipe), POLLHUP (a Unix socket) or POLLRDHUP (a TCP peer that closed) for it at once,
    /// without blocking or writing. The corresponding C function is `poll`.
    private static func readerHasGone(_ descriptor: Int32) -> Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLOUT) | hark_pollrdhup, revents: 0)
        return poll(&request, 1, 0) > 0 && request.revents & (Int16(POLLERR | POLLHUP) | hark_pollrdhup) != 0
    }

    /// When the capture's frame `frame` was captured: the segment's file's DATE, strftime name and
    /// access-log start. The first sample's time (the device's timestamp) plus the frames after
    /// it at the nominal rate: a source can take seconds to deliver its first sample after the
    /// device opens (1–2 s from an idle PulseAudio source), which the device's open time would
    /// put into every segment's time. The capture thread stores the first sample's time before
    /// the frames of its first timed read reach the ring (`CaptureLoop.stampFirstFrame`), so a
    /// segment that starts on them finds it; should the source not answer the first reads (a
    /// device without timestamps, a sound server too loaded to reply), the open time stands in.
    private func captureTime(ofFrame frame: Int) -> WallClockTime {
        (CaptureClock.firstSampleTime(monitor) ?? recordingStart).advanced(by: format.seconds(forFrames: frame))
    }

    /// Ends the open segment, if any: its file is finished (`--split-on-silence`) and it is reported.
    func endSegment(_ loop: EncoderLoop) throws(EncoderError) {
        guard openSegment != nil else { return }
        isArmed.store(true, ordering: .relaxed)
        try splitter?.endSegment()
        report(loop, endedOnSilence: true)
    }

    /// Reports the open segment as ended (at the end of capture, its file is finished with the output).
    func reportOpenSegment(_ loop: EncoderLoop) {
        report(loop, endedOnSilence: false)
    }

    private func report(_ loop: EncoderLoop, endedOnSilence: Bool) {
        guard let segment = openSegment.take() else { return }
        let paths = splitter.map { Array($0.paths.dropFirst(segment.filesBefore)) } ?? [streamName]
        whenSegmentEnds?(RecordedSegment(
            number: segment.number, startFrame: segment.startFrame, startTime: segment.startTime,
            frames: loop.framesEncoded.load(ordering: .relaxed) - segment.framesAtStart, paths: paths,
            endedOnSilence: endedOnSilence))
    }

    private func stop(_ loop: EncoderLoop) {
        stoppedOnSilence.store(true, ordering: .relaxed)
        loop.lane.close()
    }

    private func measure(_ frames: UnsafeRawBufferPointer) {
        let channels = format.channels
        let samples = frames.count / format.sampleFormat.bytesPerSample
        var channel = 0
        for index in 0..<samples {
            let magnitude = LevelMeter.magnitude(of: index, in: frames, format: format.sampleFormat).0
            squares[channel] &+= magnitude * magnitude
            channel += 1
            if channel == channels { channel = 0 }
        }
    }

    /// The completed block's level in dBFS (its loudest channel's RMS), starting the next block.
    private func takeBlockLevel() -> Double {
        var loudest = 0
        for channel in 0..<format.channels {
            loudest = max(loudest, squares[channel])
            squares[channel] = 0
        }
        let rms = (Double(loudest) / Double(blockFrames)).squareRoot() / 32768
        let level = ChannelLevel.dBFS(rms)
        lastBlockCentibels.store(level.isFinite ? Int((level * 100).rounded()) : Int.min, ordering: .relaxed)
        return level
    }

    /// The bytes of frames `range` (relative to the read position) in the ring's two regions.
    private static func frames(_ range: Range<Int>, of regions: RingRegions) -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer) {
        let bytesPerFrame = regions.bytesPerFrame
        let firstFrames = regions.firstFrameCount
        let inFirst = range.clamped(to: 0..<firstFrames)
        let inSecond = range.clamped(to: firstFrames..<(firstFrames + regions.secondFrameCount))
        let first = UnsafeRawBufferPointer(rebasing: regions.first[(inFirst.lowerBound * bytesPerFrame)..<(inFirst.upperBound * bytesPerFrame)])
        let second = UnsafeRawBufferPointer(rebasing: regions.second[((inSecond.lowerBound - firstFrames) * bytesPerFrame)..<((inSecond.upperBound - firstFrames) * bytesPerFrame)])
        return (first, second)
    }
}
