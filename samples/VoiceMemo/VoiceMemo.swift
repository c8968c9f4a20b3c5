// A second program embedding hark's record-permission gate with its own identity and purpose
// string: it gets its own decision in the store, its own prompt, and its own access-log lines.
//
//     voice-memo [-D device] SECONDS [OUTPUT.flac]
//
// Without OUTPUT it saves the memo in the user's recordings library, which needs a second,
// add-only grant (its own purpose string, its own prompt). Allow each once at the prompt, or
// ahead of time with
//     hark permissions grant microphone --app org.example.voicememo
//     hark permissions grant recordings --app org.example.voicememo

import AudioFormat
import Capture
import Encoding
import RecordPermission
import Recorder
#if canImport(Glibc)
import Glibc
#endif

@main
enum VoiceMemo {
    static let manifest = AppManifest(
        appIdentifier: "org.example.voicememo",
        displayName: "Voice Memo",
        usageDescriptions: [
            .microphone: "Voice Memo records the short spoken note you ask for and saves it where you say.",
            .recordings: "Voice Memo saves each memo as a new file in your recordings library; it never reads what is there.",
        ]
    )

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var device = "default"
        if arguments.first == "-D", arguments.count >= 2 {
            device = arguments[1]
            arguments.removeFirst(2)
        }
        guard (1...2).contains(arguments.count), let seconds = Double(arguments[0]), seconds > 0, seconds.isFinite else {
            fail("usage: voice-memo [-D device] SECONDS [OUTPUT.flac]", code: 64)
        }
        // It writes FLAC only: a name that says otherwise would hold the wrong format.
        if arguments.count == 2, !arguments[1].lowercased().hasSuffix(".flac") {
            fail("voice-memo writes FLAC; name the output OUTPUT.flac, not '\(arguments[1])'", code: 64)
        }

        StopSignals.block()
        let gate = PermissionGate(manifest: manifest)
        let savesToLibrary = arguments.count == 1
        if savesToLibrary {
            // The library: ask to add to it first, then name a new file there with the grant.
            switch gate.requestAccess(for: .addOnly) {
            case .granted(let grant):
                do throws(LibraryError) {
                    arguments.append(try RecordingsLibrary.current().newRecordingPath(grant: grant, fileExtension: "flac").path)
                } catch {
                    fail(error.message, code: 73)
                }
            case .refused(let refusal):
                fail(refusal.message, code: 77)
            }
        }
        let format = PCMFormat(sampleFormat: .s16LE, channels: 1, sampleRate: 48_000)
        var configuration = RecordingConfiguration(
            capture: CaptureRequest(device: device, format: format), output: .file(path: arguments[1]),
            codec: .flac(FLACSettings()), durationSeconds: seconds)
        // A memo in the library never replaces another one (`-2` when two start in one second).
        configuration.outputs[0].keepsExisting = savesToLibrary
        configuration.outputs[0].encoderName = "Voice Memo (hark's recorder)"
        do {
            // Watch from before consent: `hark permissions deny microphone --app org.example.voicememo`
            // (or reset) from another terminal stops the memo within a second, finalized.
            var watch = PermissionWatch(gate: gate)
            let session = try RecordingSession(configuration) { gate.requestAccess(for: .audio) }
            watch.startsFrom(session.grant)  // an answer at the prompt is newer than a change while it waited
            let started = WallClockTime.now()
            _ = try session.start()
            // The log learns of the memo now, so `hark repair --unfinished` finds one that is killed.
            let output = absolute(session.outputFiles.first ?? arguments[1])
            let recordingStart = RecordingStart(outputs: [output], device: device, start: started)
            try? AccessLog().appendStart(recordingStart)
            say("Voice Memo: recording \(seconds) s from '\(device)'")
            let summary = session.waitUntilFinished { _ in
                watch.isRevoked(consent: session.grant.consent)
                    ? .permissionRevoked(because: watch.revocation ?? "access was revoked") : nil
            }
            try? AccessLog().append(AccessLogEntry(
                start: started, end: .now(), app: manifest.appIdentifier, device: device, format: "\(format), flac",
                output: output, frames: summary.frames, consent: session.grant.consent, ended: summary.end.logName,
                recordingID: recordingStart.id))
            if let failure = summary.end.failureMessage { fail(failure, code: summary.end.exitCode) }
            say("Voice Memo: saved \(summary.frames) frames to \(output)")
        } catch {
            fail(error.description, code: error.exitCode)
        }
    }

    /// `path` from the root, as the access log keeps paths.
    static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let directory = getcwd(nil, 0) else { return path }
        defer { free(directory) }
        return String(cString: directory) + "/" + path
    }

    static func say(_ text: String) {
        let line = text + "\n"
        _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }

    static func fail(_ text: String, code: Int32) -> Never {
        say("voice-memo: " + text)
        exit(code)
    }
}
