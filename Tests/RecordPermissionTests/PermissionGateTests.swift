import Foundation
import Testing
@testable import RecordPermission

@Suite struct PermissionGateTests {
    @Test func statusNeverPromptsAndRequestPromptsOnlyWhenNotDetermined() {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        #expect(gate.authorizationStatus(for: .audio) == .notDetermined)

        let prompt = ScriptedPrompt(.allow)
        guard case .granted(let grant) = gate.requestAccess(for: .audio, prompt: prompt) else {
            Issue.record("Allow must grant")
            return
        }
        #expect(grant.consent == .prompt && prompt.askedCount == 1)
        #expect(prompt.lastPurpose == testManifest.usageDescription(for: .microphone))
        #expect(gate.authorizationStatus(for: .audio) == .authorized)

        guard case .granted(let again) = gate.requestAccess(for: .audio, prompt: prompt) else {
            Issue.record("a stored Allow must grant")
            return
        }
        #expect(again.consent == .stored && prompt.askedCount == 1, "an authorized status does not prompt")
    }

    @Test func answersAreRememberedOnlyWhenExplicit() {
        let cases: [(PromptAnswer?, AuthorizationStatus, AccessRefusal.Kind?)] = [
            (.allowOnce, .notDetermined, nil),
            (.deny, .denied, .denied),
            (.dismissed(reason: "no answer"), .notDetermined, .dismissed),
            (nil, .notDetermined, .notDeterminedWithoutTerminal),
        ]
        for (answer, remembered, refusal) in cases {
            let temporary = TemporaryLocations()
            let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
            let result = gate.requestAccess(for: .audio, prompt: ScriptedPrompt(answer))
            switch (result, refusal) {
            case (.granted(let grant), nil): #expect(grant.consent == .once)
            case (.refused(let actual), let expected?): #expect(actual.kind == expected)
            default: Issue.record("unexpected \(result) for \(String(describing: answer))")
            }
            #expect(gate.authorizationStatus(for: .audio) == remembered, "\(String(describing: answer))")
        }
    }

    @Test func deniedAndRestrictedNeverPrompt() throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        try gate.setDecision(.denied, for: .microphone)
        let prompt = ScriptedPrompt(.allow)
        guard case .refused(let refusal) = gate.requestAccess(for: .audio, prompt: prompt) else {
            Issue.record("denied must refuse")
            return
        }
        #expect(refusal.kind == .denied && prompt.askedCount == 0)
        #expect(refusal.message.contains("hark permissions grant microphone --app org.example.tests"))

        try FileManager.default.createDirectory(atPath: temporary.locations.systemDirectory, withIntermediateDirectories: true)
        try #"{"microphone": {"restricted": true}}"#.write(toFile: temporary.locations.policyFile, atomically: true, encoding: .utf8)
        try gate.reset(nil)
        #expect(gate.authorizationStatus(for: .audio) == .restricted)
        guard case .refused(let restricted) = gate.requestAccess(for: .audio, prompt: prompt) else {
            Issue.record("restricted must refuse")
            return
        }
        #expect(restricted.kind == .restricted && prompt.askedCount == 0)
        #expect(throws: PermissionChangeError.self) { try gate.setDecision(.authorized, for: .microphone) }
    }

    @Test func anExistingGrantIsGivenOnlyWhenAlreadyAuthorizedAndNeverAsks() throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        guard case .refused(let undecided) = gate.existingGrant(for: .audio) else {
            Issue.record("not determined must refuse without asking")
            return
        }
        #expect(undecided.kind == .notDetermined)
        #expect(undecided.message.contains("hark permissions grant microphone --app org.example.tests"))
        #expect(gate.authorizationStatus(for: .audio) == .notDetermined, "nothing is remembered")

        try gate.setDecision(.denied, for: .microphone)
        guard case .refused(let denied) = gate.existingGrant(for: .audio) else {
            Issue.record("denied must refuse")
            return
        }
        #expect(denied.kind == .denied)

        try gate.setDecision(.authorized, for: .microphone)
        guard case .granted(let grant) = gate.existingGrant(for: .audio) else {
            Issue.record("authorized must grant")
            return
        }
        #expect(grant.consent == .stored)
    }

    @Test func decisionsAreKeptPerApp() throws {
        let temporary = TemporaryLocations()
        let first = PermissionGate(manifest: testManifest, locations: temporary.locations)
        let second = PermissionGate(manifest: AppManifest(appIdentifier: "org.example.second", displayName: "Second",
                                                          microphoneUsageDescription: "Second records memos."),
                                    locations: temporary.locations)
        try first.setDecision(.authorized, for: .microphone)
        #expect(first.authorizationStatus(for: .audio) == .authorized)
        #expect(second.authorizationStatus(for: .audio) == .notDetermined)
    }

    @Test func watchNoticesARevocationAndIgnoresUnrelatedChanges() throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        try gate.setDecision(.authorized, for: .microphone)
        var watch = PermissionWatch(gate: gate)
        let unchanged = watch.isRevoked(consent: .stored)
        #expect(!unchanged)
        try gate.setDecision(.authorized, for: .microphone)
        try gate.setDecision(.denied, for: .recordings)
        try gate.reset(.recordings)
        let stillAllowed = watch.isRevoked(consent: .stored)
        #expect(!stillAllowed, "changes that keep the microphone allowed are not a revocation")
        try gate.setDecision(.denied, for: .microphone)
        let denied = watch.isRevoked(consent: .stored)
        #expect(denied)

        try gate.setDecision(.authorized, for: .microphone)
        var afterReset = PermissionWatch(gate: gate)
        try gate.reset(nil)
        let reset = afterReset.isRevoked(consent: .stored)
        #expect(reset, "a reset of everything revokes a stored grant")
    }

    @Test func allowOnceIsRevokedByADenyOrAResetOfTheMicrophoneOnly() throws {
        for revoke in ["reset microphone", "reset all", "deny microphone"] {
            let temporary = TemporaryLocations()
            let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
            var watch = PermissionWatch(gate: gate)  // created before consent, as hark does
            guard case .granted(let grant) = gate.requestAccess(for: .audio, prompt: ScriptedPrompt(.allowOnce)) else {
                Issue.record("Allow Once must grant")
                return
            }
            #expect(grant.consent == .once)
            try gate.setDecision(.authorized, for: .recordings)
            try gate.reset(.recordings)
            let unrelated = watch.isRevoked(consent: grant.consent)
            #expect(!unrelated, "\(revoke): the recordings decision does not touch a microphone recording")
            switch revoke {
            case "reset microphone": try gate.reset(.microphone)  // nothing is stored for an Allow Once
            case "reset all": try gate.reset(nil)
            default: try gate.setDecision(.denied, for: .microphone)
            }
            let revoked = watch.isRevoked(consent: grant.consent)
            #expect(revoked, "\(revoke) stops an Allow Once recording")
        }
    }

    @Test func aRevocationBetweenConsentAndTheStartOfTheRecordingIsNotMissed() throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        try gate.setDecision(.authorized, for: .microphone)
        var watch = PermissionWatch(gate: gate)
        guard case .granted(let grant) = gate.requestAccess(for: .audio, prompt: ScriptedPrompt(nil)) else {
            Issue.record("a stored grant must grant")
            return
        }
        try gate.setDecision(.denied, for: .microphone)  // while the device would be opening
        try gate.setDecision(.authorized, for: .microphone)  // and allowed again: the deny still counts
        let revoked = watch.isRevoked(consent: grant.consent)
        #expect(revoked)

        // "Allow" at the prompt stores a grant after the watch was created: not a revocation.
        let fresh = TemporaryLocations()
        let prompted = PermissionGate(manifest: testManifest, locations: fresh.locations)
        var promptWatch = PermissionWatch(gate: prompted)
        guard case .granted(let allowed) = prompted.requestAccess(for: .audio, prompt: ScriptedPrompt(.allow)) else {
            Issue.record("Allow must grant")
            return
        }
        let afterAllow = promptWatch.isRevoked(consent: allowed.consent)
        #expect(!afterAllow)
    }

    @Test func aRestrictionThroughASymlinkedPolicyIsNoticed() throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        try gate.setDecision(.authorized, for: .microphone)
        let managed = temporary.root.path + "/managed-policy.json"
        try FileManager.default.createDirectory(atPath: temporary.locations.systemDirectory, withIntermediateDirectories: true)
        try Data(#"{"microphone": {"restricted": false}}"#.utf8).write(to: URL(fileURLWithPath: managed))
        try FileManager.default.createSymbolicLink(atPath: temporary.locations.policyFile, withDestinationPath: managed)
        var watch = PermissionWatch(gate: gate)
        let before = watch.isRevoked(consent: .stored)
        #expect(!before && gate.authorizationStatus(for: .audio) == .authorized)
        try Data(#"{"microphone": {"restricted": true}}"#.utf8).write(to: URL(fileURLWithPath: managed))
        let after = watch.isRevoked(consent: .stored)
        #expect(after, "editing the link's target restricts the microphone")
    }

    @Test func resettingOneResourceKeepsTheOthers() throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        try gate.setDecision(.authorized, for: .recordings)
        try gate.reset(.microphone)
        #expect(gate.statusDetail(for: .recordings).status == .authorized, "nothing stored for the microphone to forget")
        try gate.setDecision(.denied, for: .microphone)
        try gate.reset(.microphone)
        #expect(gate.statusDetail(for: .microphone).status == .notDetermined)
        #expect(gate.statusDetail(for: .recordings).status == .authorized)
        try gate.reset(.recordings)
        #expect(!FileManager.default.fileExists(atPath: gate.store.path), "the last decision forgotten removes the file")
    }

    @Test func theAsyncRequestAnswersLikeAVFoundation() async throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        try gate.setDecision(.authorized, for: .microphone)
        let allowed = await gate.requestAccess(for: .audio)
        #expect(allowed)
        try gate.setDecision(.denied, for: .microphone)
        let denied = await gate.requestAccess(for: .audio)
        #expect(!denied)
    }

    @Test(arguments: [
        ("a", PromptAnswer.allow), ("Allow", .allow), (" yes ", .allow),
        ("o", .allowOnce), ("Allow Once", .allowOnce), ("once", .allowOnce),
        ("d", .deny), ("Don’t Allow", .deny), ("no", .deny),
        ("", .dismissed(reason: "no answer")), ("maybe", .dismissed(reason: "unclear answer")),
        ("allow!", .dismissed(reason: "unclear answer")),
    ])
    func promptAnswersAreParsedStrictly(_ text: String, _ expected: PromptAnswer) {
        #expect(TerminalPrompt.parse(text) == expected)
    }

    @Test func withoutAControllingTerminalThePromptReportsNobodyToAsk() {
        #expect(TerminalPrompt(terminalPath: "/nonexistent/tty").ask(appName: "T", resource: .microphone, purpose: "p") == nil)
    }
}
