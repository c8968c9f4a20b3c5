import AudioFormat
import RecordPermission
import Recorder

/// Writes an access-log entry for each segment of a sound-activated recording, when it ends: what
/// was recorded, from when to when. The recording's own entry, written when hark stops, covers the
/// whole time the microphone was open, armed or not.
///
/// Runs on the first output's encoder thread (a few times a minute at most, never on the capture
/// thread). A segment starts when its first frame was captured (`RecordedSegment.startTime`) and
/// ends its frames later at the nominal rate.
struct SegmentLogEntry: Sendable {
    let recordingID: String
    let device: String
    let format: PCMFormat
    let grant: CaptureGrant
    let codecs: [String]
    /// Whether the recording goes to the recordings library (`AccessLogEntry.savedToLibrary`).
    let savedToLibrary: Bool

    func append(_ segment: RecordedSegment) {
        let segmentStart = segment.startTime
        var entry = AccessLogEntry(
            start: segmentStart, end: segmentStart.advanced(by: format.seconds(forFrames: segment.frames)),
            app: grant.manifest.appIdentifier, device: device, format: "\(format), \(codecs.joined(separator: ", "))",
            output: segment.paths.map(absolutePath).joined(separator: ", "), frames: segment.frames,
            consent: grant.consent, resource: grant.resource, ended: segment.endedOnSilence ? "silence" : "stopped", recordingID: recordingID)
        entry.segment = segment.number
        entry.savedToLibrary = savedToLibrary
        try? AccessLog().append(entry)
    }
}
