import AudioFormat
import RingBuffer

/// The rings between capture and the encoders, one per output, made before any output's header is
/// written: memory that cannot be had (a long `--ring-seconds` of many channels at a high rate,
/// under a memory limit: 60 s of 768 kHz × 8 × 32-bit audio is 2 GiB) fails the start in one line,
/// exit 71, with every output's path left as it was, where a failed allocation would stop the
/// program with a backtrace.
enum SessionRings {
    /// `count` rings of at least `frames` frames each; `requestedSeconds` is `--ring-seconds`, for
    /// the line.
    static func make(count: Int, frames: Int, format: PCMFormat, requestedSeconds: Double) throws(RecordingError) -> [FrameRingBuffer] {
        var rings: [FrameRingBuffer] = []
        for _ in 0..<count {
            guard let ring = FrameRingBuffer(allocatingFrames: frames, bytesPerFrame: format.bytesPerFrame) else {
                throw .system(refusal(frames: frames, format: format, requestedSeconds: requestedSeconds, outputs: count))
            }
            rings.append(ring)
        }
        return rings
    }

    private static func refusal(frames: Int, format: PCMFormat, requestedSeconds: Double, outputs: Int) -> String {
        let capacity = FrameRingBuffer.capacity(holding: frames)
        let mebibytes = (Double(capacity) * Double(format.bytesPerFrame) / 1_048_576).rounded(.up)
        let each = outputs > 1 ? " for each of \(outputs) outputs" : ""
        return "cannot have \(Int(mebibytes)) MiB of memory for the ring between capture and encoder\(each) "
            + "(\(format), --ring-seconds \(SecondsText.format(requestedSeconds))); ask for fewer seconds with --ring-seconds"
    }
}
