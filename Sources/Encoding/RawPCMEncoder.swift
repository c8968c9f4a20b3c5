import AudioFormat
#if canImport(Glibc)
import Glibc
#endif

/// Writes the captured samples as they are, in the capture format (`-f`), with nothing around them:
/// what speech tools read on stdin (whisper.cpp, vosk, nerd-dictation: 16 kHz mono S16_LE) and what
/// `arecord -t raw` writes. A killed recorder leaves every frame written so far; nothing needs
/// finishing.
public final class RawPCMEncoder: AudioEncoder {
    private let sink: OutputSink
    private let bytesPerFrame: Int

    public var bytesWritten: Int { sink.bytesWritten }
    public var framesHeld: Int? { sink.framesInCompleteWrites }
    public var maximumBytesPerFrame: Double? { Double(bytesPerFrame) }
    public var maximumFinishBytes: Int? { 0 }

    public init(format: PCMFormat, sink: OutputSink) {
        self.sink = sink
        bytesPerFrame = format.bytesPerFrame
    }

    public func encode(_ frames: UnsafeRawBufferPointer) throws(EncoderError) {
        guard sink.write(frames, frames: frames.count / bytesPerFrame) else {
            throw .writeFailed(errno: sink.failure ?? EIO)
        }
    }

    public func finish() throws(EncoderError) {}

    /// Keeps every whole frame the failed write got onto the file and cuts the torn one off, so
    /// the file holds whole frames only, as many as fitted.
    public func salvageAfterWriteFailure() {
        _ = sink.truncateToWholeFramesOfFailedWrite(bytesPerFrame: bytesPerFrame)
    }
}
