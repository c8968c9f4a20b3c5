import Encoding
import RecordPermission
import Synchronization
import Realtime
#if canImport(Glibc)
import Glibc
#endif

/// One recording written as consecutive files: a new file every `framesPerFile` frames
/// (`--max-file-time`) and whenever `requestSplit()` is called (SIGUSR1).
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
final class SplittingEncoder: AudioEncoder, @unchecked Sendable {
    /// Makes the codec for a file starting at the given moment (its DATE tag).
    typealias MakeEncoder = (OutputSink, WallClockTime) throws(EncoderError) -> any AudioEncoder

    private var output: OutputTarget
    private var encoder: any AudioEncoder
    private var naming: OutputNaming
    private let makeEncoder: MakeEncoder
    private let framesPerFile: Int?
    private let bytesPerFrame: Int
    /// Invariant: frames written to the current file; at most `framesPerFile`.
    private var framesInFile = 0
    private var bytesInFinishedFiles = 0
    /// Set by any thread (relaxed: it carries no data), taken by the encoder thread.
    private let splitRequested = Atomic<Bool>(false)
    /// The files written, in order. Changed on the encoder thread; read once it has finished.
    private(set) var paths: [String]
    /// Where each file starts in the recording, in frames (0 for the first); beside `paths`.
    private(set) var fileStartFrames: [Int] = [0]
    /// Syncing and closing the last finished file, if one is.
    private var pendingFlush: PosixThread?
    /// Told each new file's path once it has its name (the access log's record of a recording's
    /// files). Set before the encoder thread starts; called on it.
    var whenFileStarts: (@Sendable (String) -> Void)?

    init(output: OutputTarget, path: String, encoder: any AudioEncoder, naming: OutputNaming, framesPerFile: Int?,
         bytesPerFrame: Int, makeEncoder: @escaping MakeEncoder) {
        precondition(framesPerFile.map { $0 > 0 } ?? true, "a file must hold at least one frame")
        self.output = output
        self.encoder = encoder
        self.naming = naming
        self.framesPerFile = framesPerFile
        self.bytesPerFrame = bytesPerFrame
        self.makeEncoder = makeEncoder
        paths = [path]
    }

    /// Asks for a new file before the next frame. Safe from any thread. A request while the
    /// current file is still empty waits until it holds audio, so no file is ever empty.
    func requestSplit() {
        splitRequested.store(true, ordering: .relaxed)
    }

    func encode(_ frames: UnsafeRawBufferPointer) throws(EncoderError) {
        var offset = 0
        while offset < frames.count {
            if framesInFile > 0 && (framesInFile == framesPerFile || splitRequested.exchange(false, ordering: .relaxed)) {
                try startNextFile()
            }
            var count = (frames.count - offset) / bytesPerFrame
            if let framesPerFile { count = min(count, framesPerFile - framesInFile) }
            let end = offset + count * bytesPerFrame
            try encoder.encode(UnsafeRawBufferPointer(rebasing: frames[offset..<end]))
            framesInFile += count
            offset = end
        }
    }

    func finish() throws(EncoderError) {
        try encoder.finish()
        waitForPendingFlush()
    }

    func salvageAfterWriteFailure() {
        encoder.salvageAfterWriteFailure()
    }

    var bytesWritten: Int { bytesInFinishedFiles + encoder.bytesWritten }

    var maximumBytesPerFrame: Double? { encoder.maximumBytesPerFrame }
    var maximumFinishBytes: Int? { encoder.maximumFinishBytes }

    /// Flushes the current file to storage, and waits until the finished ones are.
    func synchronize() {
        output.synchronize()
        waitForPendingFlush()
    }

    private func waitForPendingFlush() {
        pendingFlush.take()?.join()
    }

    private func startNextFile() throws(EncoderError) {
        try encoder.finish()
        bytesInFinishedFiles += encoder.bytesWritten
        let path = naming.next(at: time(nil))
        let next: OutputTarget
        do throws(RecordingError) {
            next = try OutputTarget(.file(path: path))
        } catch {
            throw .cannotStartNextFile(error.description)
        }
        let nextEncoder: any AudioEncoder
        do throws(EncoderError) {
            nextEncoder = try makeEncoder(OutputSink(fileDescriptor: next.fileDescriptor), .now())
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
        // The finished file goes to a thread that syncs it; its descriptor closes as that thread
        // releases it. The previous such thread has had a whole part to finish.
        waitForPendingFlush()
        let finished = FinishedPart(target: output)
        do throws(ThreadStartError) {
            pendingFlush = try PosixThread(name: "hark-sync") { finished.target.synchronize() }
        } catch {
            finished.target.synchronize()
        }
        output = next
        encoder = nextEncoder
        fileStartFrames.append(fileStartFrames.last! + framesInFile)
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
