import Encoding
import RecordPermission
import Capture
import Realtime
#if canImport(Glibc)
import Glibc
#endif

/// One recording written as consecutive files: a new file every `framesPerFile` frames
/// (`--max-file-time`) and at each frame its `SplitSchedule` names (SIGUSR1).
///
/// It sits between the encoder loop and the codec: every frame goes to exactly one file, in order,
/// so the files played back to back are the recording, frame for frame. A split finishes the
/// current file completely (the codec flushes, a FLAC file gets its true STREAMINFO, an Ogg Opus
/// stream its end-of-stream page), then creates the next file under a temporary name, starts a new
/// stream in it and gives it its name. The finished file is synced to storage and closed on a
/// thread of its own: on a busy disk `fsync` can take longer than the ring holds (a split under a
/// loaded test run lost a second of audio that way), and the encoder must get back to the ring.
/// That thread is joined before the next split and before the recording is reported finished, so
/// every part is on storage when hark says so.
///
/// Splitting allocates (a new codec instance, a file name) and does file I/O; it runs on the
/// encoder thread, never the capture thread, and a few times an hour at most, while the ring holds
/// seconds of audio. Between splits `encode` adds no allocation to the codec's own.
///
/// The first file is named when its first audio comes (`nameFirstFile`), not when capture starts:
/// a recording that gets none (a source that never delivers, a server that goes away at once, a
/// revocation before the first period) leaves an existing file of that name as it was, rather
/// than replaced by a header alone, and the session then gives back what it made.
///
/// Sound-activated recording (`SoundActivation`) starts without a file: the first one is made
/// when the first segment begins (`beginSegment`), and `endSegment` finishes the current one at
/// once (`--split-on-silence`), so no file exists until something crossed the level and each
/// segment is complete on disk while hark waits for the next. `skip` counts the frames the
/// recording passed over, so each file knows where in the recording it starts.
final class SplittingEncoder: AudioEncoder, @unchecked Sendable {
    /// Makes the codec for a file starting at the given moment (its DATE tag) and frame of the
    /// recording (its HARK_FIRST_SAMPLE).
    typealias MakeEncoder = (OutputSink, WallClockTime, Int) throws(EncoderError) -> any AudioEncoder

    /// The current file's target; before a sound-activated recording's first file, the one
    /// made (and removed again) before consent, whose name the first file may take.
    private var output: OutputTarget
    /// The current file's codec; nil while no file is open (sound activation, between segments).
    private var encoder: (any AudioEncoder)?
    /// Whether no file has been made yet (sound activation, before the first sound).
    private var hasNoFileYet: Bool
    /// Whether the first file is made but not named yet: it gets its name with its first audio.
    /// Encoder thread; read by others once it has finished.
    private(set) var awaitsFirstAudio: Bool
    private var naming: OutputNaming
    private let makeEncoder: MakeEncoder
    /// Whether a sound-activated recording's first file must not replace one that is there (a
    /// recording added to the library); later files never do.
    private let firstFileKeepsExisting: Bool
    private let framesPerFile: Int?
    private let bytesPerFrame: Int
    /// Invariant: frames written to the current file; at most `framesPerFile`.
    private var framesInFile = 0
    /// Frames of the recording so far, written or skipped: where the next frame is in it.
    private var recordingFrames = 0
    /// The wall-clock time of the next file's first frame, when the caller knows it (a segment's
    /// start); else a file starts `.now()`.
    private var nextFileStart: WallClockTime?
    private var bytesInFinishedFiles = 0
    private var framesInFinishedFiles = 0
    private let codecBytesPerFrame: Double?
    private let codecFinishBytes: Int?
    /// A file's header as the template wrote it (every file of the output has the same settings).
    private let headerBytes: Int
    /// The recording frames SIGUSR1 asked new files to start at, chosen by the capture thread so
    /// that every output splits at the same frames however far behind its encoder is.
    private let splits: SplitSchedule
    /// When a recording frame was captured, for a split file's DATE and strftime name (nil until
    /// the first sample's time is known). Set before the encoder thread starts; called on it.
    var timeOfFrame: (@Sendable (Int) -> WallClockTime?)?
    /// The files written, in order. Changed on the encoder thread; read once it has finished.
    private(set) var paths: [String]
    /// Where each file starts in the recording, in frames (0 for the first, unless sound
    /// activation skipped the start); beside `paths`.
    private(set) var fileStartFrames: [Int]
    /// Which file each of `paths` was when it was made (nil: it could not be looked at); beside
    /// `paths`.
    private(set) var fileIdentities: [FileIdentity?]
    /// The last file's descriptor, still open: it reaches that file wherever it was moved.
    var lastFileDescriptor: Int32? { paths.isEmpty ? nil : output.fileDescriptor }
    /// Syncing and closing the last finished file, if one is.
    private var pendingFlush: PosixThread?
    /// Told each new file's path once it has its name (the access log's record of a recording's
    /// files). Set before the encoder thread starts; called on it.
    var whenFileStarts: (@Sendable (String) -> Void)?
    /// Told the first file's path when it is named with its first audio, if it replaces a file
    /// of that name (one that must be new took its name at the start). Same rules.
    var whenFirstFileIsNamed: (@Sendable (String) -> Void)?

    /// With `encoder` nil (sound activation), no file is made until the first frame; `output` is
    /// the discarded target whose name was taken for the first file, given back then. `template`
    /// is a codec of the same settings (`encoder`, or the one made to check them), whose bounds and
    /// header size every file shares.
    init(output: OutputTarget, encoder: (any AudioEncoder)?, boundsOf template: any AudioEncoder,
         naming: OutputNaming, splits: SplitSchedule, framesPerFile: Int?, bytesPerFrame: Int,
         firstFileKeepsExisting: Bool, makeEncoder: @escaping MakeEncoder) {
        precondition(framesPerFile.map { $0 > 0 } ?? true, "a file must hold at least one frame")
        self.output = output
        self.encoder = encoder
        codecBytesPerFrame = template.maximumBytesPerFrame
        codecFinishBytes = template.maximumFinishBytes
        headerBytes = template.bytesWritten
        hasNoFileYet = encoder == nil
        awaitsFirstAudio = encoder != nil
        self.naming = naming
        self.splits = splits
        self.framesPerFile = framesPerFile
        self.bytesPerFrame = bytesPerFrame
        self.makeEncoder = makeEncoder
        self.firstFileKeepsExisting = firstFileKeepsExisting
        paths = []
        fileStartFrames = []
        fileIdentities = []
    }

    /// Names the first file (`OutputTarget.commit`: replacing one that is there, or keeping a new
    /// name taken at the start), now that audio has come for it. One that cannot be named stays
    /// unnamed, and is given back as one that got no audio is.
    private func nameFirstFile() throws(EncoderError) {
        do throws(RecordingError) {
            try output.commit()
        } catch {
            throw .cannotStartNextFile(error.description)
        }
        awaitsFirstAudio = false
        let path = output.destination.description
        paths.append(path)
        fileStartFrames.append(0)
        fileIdentities.append(FileIdentity(descriptor: output.fileDescriptor))
        if !firstFileKeepsExisting { whenFirstFileIsNamed?(path) }
    }

    /// Takes the splits asked for (SIGUSR1) at frames the recording has reached: whether there
    /// were any. Several taken at once are one split, and one at a frame where the file is still
    /// empty asks for nothing more, so no file is ever empty.
    private func takeSplitsReached() -> Bool {
        var took = false
        while let frame = splits.next, frame <= recordingFrames {
            splits.removeNext()
            took = true
        }
        return took
    }

    func encode(_ frames: UnsafeRawBufferPointer) throws(EncoderError) {
        if awaitsFirstAudio && !frames.isEmpty { try nameFirstFile() }
        var offset = 0
        while offset < frames.count {
            // Looked at after the frames were acquired from the ring: a split at or before any
            // of them is scheduled by then (`SplitSchedule`).
            let splitReached = takeSplitsReached()
            if encoder == nil {
                // A new file anyway: a split asked for while none was open asks for nothing more,
                // including one after this segment's first frame (its pre-roll reaches back before
                // the signal, which came while hark was armed).
                while splits.next != nil { splits.removeNext() }
                try startNextFile()
            } else if framesInFile > 0 && (framesInFile == framesPerFile || splitReached) {
                try finishFile()
                try startNextFile()
            }
            var count = (frames.count - offset) / bytesPerFrame
            if let framesPerFile { count = min(count, framesPerFile - framesInFile) }
            // Up to the next split's frame, exactly (it is after `recordingFrames` now).
            if let next = splits.next, next > recordingFrames { count = min(count, next - recordingFrames) }
            let end = offset + count * bytesPerFrame
            try encoder!.encode(UnsafeRawBufferPointer(rebasing: frames[offset..<end]))
            framesInFile += count
            recordingFrames += count
            offset = end
        }
    }

    /// The recording passes over `frames` frames that no file holds (sound activation, waiting).
    func skip(frames: Int) {
        recordingFrames += frames
    }

    /// The next frame begins a segment whose first frame was captured at `time`: the file it
    /// opens (if none is open) gets that moment as its DATE.
    func beginSegment(capturedAt time: WallClockTime) {
        nextFileStart = time
    }

    /// Finishes the current file now; the next frame starts a new one. Nothing when none is open.
    func endSegment() throws(EncoderError) {
        // Every split asked for until the next segment's file opens is taken then (`encode`): that
        // file is new anyway.
        if encoder != nil { try finishFile() }
    }

    func finish() throws(EncoderError) {
        if let encoder { try encoder.finish() }
        waitForPendingFlush()
    }

    func salvageAfterWriteFailure() {
        encoder?.salvageAfterWriteFailure()
    }

    var bytesWritten: Int { bytesInFinishedFiles + (encoder?.bytesWritten ?? 0) }

    /// The finished files' frames and the current file's: what its codec holds when it can tell,
    /// else the frames given to it (Ogg Opus).
    var framesHeld: Int? {
        framesInFinishedFiles + (encoder.map { $0.framesHeld ?? framesInFile } ?? 0)
    }

    /// The codec's bounds, the same for every file and known while none is open: an armed
    /// output's `--max-size` is checked and stepped with its codec's bounds, not the generic ones
    /// (raw PCM plus 8192 frames held back), which took WAV's 64k to 32k and refused Opus's.
    var maximumBytesPerFrame: Double? { codecBytesPerFrame }
    var maximumFinishBytes: Int? { codecFinishBytes }
    /// The open file's (a finished file has written all it held).
    var framesAwaitingOutput: Int { encoder?.framesAwaitingOutput ?? 0 }
    /// A file may start before any next frames: none is open yet (armed, between segments), or a
    /// split (--max-file-time, or SIGUSR1 from any thread at any moment) falls within them. So one
    /// header is always kept in reserve under `--max-size`: without it an armed WAV passed its
    /// limit by its header when its first segment began. With it, what the file it follows writes
    /// as it finishes, when the codec knows exactly (WAV's pad byte): the loop's own flush reserve
    /// is for the last file, and a step that crossed a split spent it on the one before (a WAV of
    /// 3-byte frames ended a byte over its limit). A codec that holds audio back (FLAC, Opus)
    /// flushes frames the loop counted when they came.
    var headerBytesAhead: Int { headerBytes + (codecFinishBytes ?? 0) }

    /// Frames up to the second file start ahead, at the earliest: so `--max-size`, which keeps one
    /// header in reserve, is never passed by a second header (two SIGUSR1 splits, or a split and
    /// a `--max-file-time` boundary, within one drain of a ring that fell behind). A lower bound
    /// is enough (a step stops short, and the next goes on): starts are the next frame while no
    /// file is open, each `--max-file-time` boundary, and the first two splits scheduled (a split
    /// reached where a file is empty counts, though it starts none). Later splits come after these.
    var framesBeforeSecondFileStart: Int? {
        var first = Int.max
        var second = Int.max
        var candidates = (encoder == nil ? 0 : Int.max,
                          framesPerFile.map { encoder == nil ? 0 : max(0, $0 - framesInFile) } ?? Int.max,
                          splits.next.map { max(0, $0 - recordingFrames) } ?? Int.max,
                          splits.second.map { max(0, $0 - recordingFrames) } ?? Int.max)
        withUnsafeBytes(of: &candidates) { offsets in
            for offset in offsets.assumingMemoryBound(to: Int.self) where offset != first {
                if offset < first {
                    second = first
                    first = offset
                } else if offset < second {
                    second = offset
                }
            }
        }
        // After any start, the next boundary is a whole file later.
        if let framesPerFile, first != Int.max { second = min(second, first + framesPerFile) }
        return second == Int.max ? nil : second
    }

    /// Flushes the current file to storage, and waits until the finished ones are.
    func synchronize() {
        if !awaitsFirstAudio { output.synchronize() }  // a file never named is given back
        waitForPendingFlush()
    }

    private func waitForPendingFlush() {
        pendingFlush.take()?.join()
    }

    /// Finishes the current file and hands it to a thread that syncs it; its descriptor closes
    /// as that thread releases it. The previous such thread has had a whole part to finish.
    private func finishFile() throws(EncoderError) {
        guard let finishing = encoder else { return }
        // Finished while it is still the current file's codec: a finish that fails (a full disk,
        // a file-size limit) throws with it in place, so the encoder loop's salvage cuts this file
        // back to what is whole and `bytesWritten` counts it, as for any write that fails.
        try finishing.finish()
        encoder = nil
        bytesInFinishedFiles += finishing.bytesWritten
        framesInFinishedFiles += framesInFile
        waitForPendingFlush()
        let finished = FinishedPart(target: output)
        do throws(ThreadStartError) {
            pendingFlush = try PosixThread(name: "hark-sync") { finished.target.synchronize() }
        } catch {
            finished.target.synchronize()
        }
    }

    /// Opens the next file: the pending first target when there is one (a sound-activated
    /// recording's first file, named now when the name holds the time), else a new one.
    private func startNextFile() throws(EncoderError) {
        // When the file's first frame was captured (a segment's, or a split's from the first
        // sample's time): its DATE and strftime name, as HARK_FIRST_SAMPLE_TIME says it.
        let start = nextFileStart.take() ?? timeOfFrame?(recordingFrames) ?? .now()
        // A later file never replaces one that is there (`OutputNaming`), not even one another
        // recorder made a moment ago; the first keeps the user's name, as an unsplit one does.
        var keepsExisting = true
        if hasNoFileYet {
            hasNoFileYet = false
            keepsExisting = firstFileKeepsExisting
            if case .file(let unused) = output.destination { naming.forget(unused) }
        }
        let next: OutputTarget
        do throws(RecordingError) {
            next = try OutputTarget(.file(path: naming.next(at: Int(start.secondsSinceEpoch))), keepsExisting: keepsExisting)
        } catch {
            throw .cannotStartNextFile(error.description)
        }
        let nextEncoder: any AudioEncoder
        do throws(EncoderError) {
            nextEncoder = try makeEncoder(OutputSink(fileDescriptor: next.fileDescriptor), start, recordingFrames)
        } catch {
            next.discard()
            throw error
        }
        do throws(RecordingError) {
            try next.commit()
        } catch {
            next.discard()
            throw .cannotStartNextFile(error.description)
        }
        let path = next.destination.description
        output = next
        encoder = nextEncoder
        fileStartFrames.append(recordingFrames)
        fileIdentities.append(FileIdentity(descriptor: next.fileDescriptor))
        framesInFile = 0
        paths.append(path)
        whenFileStarts?(path)
    }
}

/// A finished part handed to the thread that syncs it. Unchecked: the encoder thread lets go of
/// the target as it hands it over, so only that thread uses it from then on.
private struct FinishedPart: @unchecked Sendable {
    let target: OutputTarget
}
