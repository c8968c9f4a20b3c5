import Foundation
import Testing
@testable import RecordPermission

/// The gate's side of the desktop's microphone switch, with stand-in helpers (shell one-liners) that speak
/// hark-privacy-switch's protocol (one byte per reading, until stdin closes), so each state and
/// each failure of the helper can be produced at will. The real helper, GSettings and the GNOME
/// schema are exercised end to end in HarkCLITests.DesktopPrivacySwitchTests.
@Suite struct DesktopSwitchReadingTests {
    /// A reader whose helper is a shell one-liner speaking the helper's protocol.
    func reader(_ script: String) -> DesktopPrivacySwitch {
        DesktopPrivacySwitch(helperCommand: ["/bin/sh", "-c", script], schemasMayExist: { true })
    }

    /// A recording granted the microphone (stored), with `helper` as the desktop's switch, and its
    /// watch made before the grant, as `hark record` makes it; the test fails when it is refused.
    /// `places` holds the store and must outlive them.
    func grantedRecording(_ helper: DesktopPrivacySwitch, _ places: TemporaryLocations) throws -> (watch: PermissionWatch, grant: CaptureGrant) {
        let gate = PermissionGate(manifest: testManifest, locations: places.locations, desktopSwitch: helper)
        try gate.setDecision(.authorized, for: .microphone)
        let watch = PermissionWatch(gate: gate)
        let access = gate.requestAccess(for: .audio, prompt: ScriptedPrompt(nil))
        guard case .granted(let grant) = access else { throw RecordingRefused(access: "\(access)") }
        return (watch, grant)
    }

    struct RecordingRefused: Error { let access: String }

    /// Whether `watch` says the recording is revoked within 30 s, asked every 20 ms.
    func waitForRevocation(_ watch: inout PermissionWatch, _ grant: CaptureGrant) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if watch.isRevoked(consent: grant.consent) { return true }
            usleep(20_000)
        }
        return false
    }

    @Test func eachReadingOfTheHelperIsTakenAsItSays() throws {
        for (script, expected) in [("printf 1; cat >/dev/null", DesktopPrivacySwitch.Reading.microphoneOff),
                                   ("printf 0; cat >/dev/null", .microphoneOn), ("printf x", .absent)] {
            #expect(reader(script).reading() == expected, "\(script)")
        }
    }

    /// The helper lives as long as the recording, so it must hold nothing of its parent's but its
    /// three standard descriptors: a copy of a pipe or socket the parent's own parent waits on
    /// (Foundation's `Process` watches one per child) would stay open as long. The stand-in
    /// reads "off" if it inherited a descriptor the test left open without close-on-exec.
    @Test func theHelperInheritsNoDescriptorButItsStandardThree() throws {
        let opened = open("/dev/null", O_RDONLY)  // not close-on-exec
        try #require(opened >= 0)
        let inherited: Int32 = 200
        try #require(dup2(opened, inherited) == inherited)
        close(opened)
        defer { close(inherited) }
        let reading = reader("if [ -e /proc/self/fd/\(inherited) ]; then printf 1; else printf 0; fi; cat >/dev/null").reading()
        #expect(reading == .microphoneOn, "the helper inherited descriptor \(inherited)")
    }

    @Test func aMissingOrSilentHelperIsUnreadableAndDoesNotRestrict() throws {
        let missing = DesktopPrivacySwitch(helperPath: nil, schemasMayExist: { true })
        #expect(missing.reading() == .unreadable("hark-privacy-switch is not installed beside hark"))
        #expect(reader("exit 3").reading() == .unreadable("hark-privacy-switch ended without a reading"))
        let places = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: places.locations, desktopSwitch: missing)
        #expect(gate.statusDetail(for: .microphone).status == .notDetermined)
        // Without compiled schemas anywhere, no helper is even started.
        let noSchemas = DesktopPrivacySwitch(helperPath: "/nonexistent/helper", schemasMayExist: { false })
        #expect(noSchemas.reading() == .absent)
    }

    /// A helper that answered, then ended (killed from outside), is started again: the switch
    /// turned off after that is still seen. Until the new helper answers, the last reading stands.
    @Test func aHelperThatEndsAfterAnsweringIsStartedAgain() throws {
        let started = NSTemporaryDirectory() + "hark-switch-started-\(UUID().uuidString)"
        defer { unlink(started) }
        // The first helper says "on" and ends; the second says "off" and stays.
        let helper = reader("if [ -e '\(started)' ]; then printf 1; cat >/dev/null; else : > '\(started)'; printf 0; fi")
        // The first helper's "on", unless the second answered within the same read.
        var reading = helper.reading()
        #expect(reading == .microphoneOn || reading == .microphoneOff)
        let deadline = Date().addingTimeInterval(30)
        while reading == .microphoneOn, Date() < deadline {
            usleep(20_000)
            reading = helper.reading()
        }
        #expect(reading == .microphoneOff, "the second helper's reading")
    }

    /// One that keeps ending is started again `maximumRestarts` times, then the switch cannot be
    /// read, and the recording's watch says so once, keeping the recording going (as one started
    /// with the switch unreadable goes on).
    @Test func aHelperThatKeepsEndingLeavesTheSwitchUnreadableAndTheWatchSaysSo() throws {
        let helper = reader("printf 0")
        let places = TemporaryLocations()
        let recording = try grantedRecording(helper, places)
        var watch = recording.watch
        let grant = recording.grant
        let atStart = watch.desktopSwitchAtStart()
        #expect(atStart == .microphoneOn)
        let deadline = Date().addingTimeInterval(30)
        var warnings: [String] = []
        while helper.reading() == .microphoneOn, Date() < deadline {
            let revoked = watch.isRevoked(consent: grant.consent)
            #expect(!revoked)
            warnings += [watch.takeWarning()].compactMap { $0 }
            usleep(20_000)
        }
        let expected = "hark-privacy-switch ended \(DesktopPrivacySwitch.maximumRestarts + 1) times; it is not started again"
        #expect(helper.reading() == .unreadable(expected))
        for _ in 0..<2 {
            let revoked = watch.isRevoked(consent: grant.consent)
            #expect(!revoked, "a switch that cannot be read does not restrict")
            warnings += [watch.takeWarning()].compactMap { $0 }
        }
        #expect(warnings == ["warning: the desktop's microphone switch can no longer be read (\(expected)); the recording goes on without it"])
    }

    /// A helper that answers after the first reading's wait is left running: the switch is
    /// unreadable (the recording says so and goes on), and the "off" it then reports revokes the
    /// recording. It was stopped at the wait's end, and its answer never seen.
    @Test func aHelperThatAnswersLateIsStillHeard() throws {
        let helper = DesktopPrivacySwitch(helperCommand: ["/bin/sh", "-c", "sleep 1; printf 1; cat >/dev/null"],
                                          schemasMayExist: { true }, firstReadingTimeoutMilliseconds: 100)
        let places = TemporaryLocations()
        let recording = try grantedRecording(helper, places)
        var watch = recording.watch
        let grant = recording.grant
        let atStart = watch.desktopSwitchAtStart()
        #expect(atStart == .unreadable("hark-privacy-switch did not answer within 100 ms"))
        let revoked = waitForRevocation(&watch, grant)
        #expect(revoked)
        #expect(watch.revocation == "microphone access was turned off in the desktop's privacy settings")
        #expect(watch.takeWarning() == nil, "the start said it could not be read; nothing more until it could")
    }

    @Test func switchedOffRestrictsTheMicrophoneOnlyAndNeverPrompts() throws {
        let helper = reader("printf 1; cat >/dev/null")
        let places = TemporaryLocations()
        let manifest = AppManifest(appIdentifier: "org.example.tests", displayName: "Tests",
                                   usageDescriptions: [.microphone: "Tests.", .systemAudio: "Tests."])
        let gate = PermissionGate(manifest: manifest, locations: places.locations, desktopSwitch: helper)
        try gate.setDecision(.authorized, for: .microphone)
        let prompt = ScriptedPrompt(.allow)
        guard case .refused(let refusal) = gate.requestAccess(for: .audio, prompt: prompt) else {
            Issue.record("granted while the desktop's switch is off")
            return
        }
        #expect(refusal.kind == .restricted && refusal.message.contains("Settings › Privacy › Microphone"))
        #expect(prompt.askedCount == 0)
        guard case .granted = gate.requestAccess(for: .systemAudio, prompt: prompt) else {
            Issue.record("the microphone's switch refused system audio")
            return
        }
    }

    @Test func turningTheSwitchOffDuringARecordingRevokesItWithItsOwnReason() throws {
        // On at first, off once the recording is granted, as the helper reports a change. The
        // change waits for a file the test makes, not for a fixed time: a reading taken late (a
        // loaded machine) would otherwise find both bytes and see the switch already off.
        let turnedOff = NSTemporaryDirectory() + "hark-switch-off-\(UUID().uuidString)"
        defer { unlink(turnedOff) }
        let helper = reader("printf 0; while [ ! -e '\(turnedOff)' ]; do sleep 0.05; done; printf 1; cat >/dev/null")
        let places = TemporaryLocations()
        let recording = try grantedRecording(helper, places)
        var watch = recording.watch
        let grant = recording.grant
        let revokedBeforeTheChange = watch.isRevoked(consent: grant.consent)
        #expect(!revokedBeforeTheChange)
        #expect(FileManager.default.createFile(atPath: turnedOff, contents: nil))
        let revoked = waitForRevocation(&watch, grant)
        #expect(revoked)
        #expect(watch.revocation == "microphone access was turned off in the desktop's privacy settings")
    }
}
