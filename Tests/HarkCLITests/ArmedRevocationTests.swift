import Foundation
import Testing

/// A sound-activated hark waiting for a sound still has the microphone open: revoking access stops
/// it as it stops a recording (`AccessLogTests`), within a second. A suite of its own so that the
/// ThreadSanitizer phase runs it beside the other sound-activation tests (scripts/test).
@Suite struct ArmedRevocationTests {
    @Test func revokingAccessStopsAnArmedRecorder() throws {
        let quiet = Data(count: 30 * 48_000 * 4)
        let rig = try ALSATestRig(input: quiet)
        try rig.startPulseAudio()
        // On a terminal, whose status line counts the time listened: a second on it is a second
        // captured, so the deny comes while audio flows (a sound server's first audio can take
        // seconds).
        let recording = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "--start-above", "-30", "-o", rig.path("armed.flac")]), rig: rig)
        #expect(recording.waitFor(" 0:00:01.", timeout: TestLoad.seconds(30)), "\(recording.screen)")
        #expect(try runHark(["permissions", "deny", "microphone"], rig: rig).status == 0)
        let result = recording.finish(timeout: TestLoad.seconds(20))
        #expect(result.status == 77, "\(result.screen)")
        #expect(result.screen.contains("microphone access was revoked"), "\(result.screen)")
        // With no file, the capture's end is the logged first sample's time plus the time the
        // summary says it listened (the frames captured): as `revocationStopDelay` times it.
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        let entry = try #require(log.split(separator: "\n").last.map(String.init), "\(log)")
        #expect(entry.contains("\"ended\":\"revoked\""), "\(log)")
        let first = try #require(entry.firstMatch(of: /"firstSample":"([^"]+)"/).flatMap { preciseTime(String($0.1)) }, "\(entry)")
        let armed = try #require(result.screen.firstMatch(of: /in (\d+\.\d{3}) s armed/).flatMap { Double($0.1) }, "\(result.screen)")
        let stamp = rig.directory.appendingPathComponent("config/hark/permissions/.dev.hark.cli.microphone.revoked").path
        let reaction = try first + armed - changeTime(of: stamp)
        print("ArmedRevocationTests: an armed hark listened \(reaction) s past the deny")
        #expect(reaction < 1, "the capture went on \(reaction) s after the deny")
        #expect(!FileManager.default.fileExists(atPath: rig.path("armed.flac")))
    }
}
