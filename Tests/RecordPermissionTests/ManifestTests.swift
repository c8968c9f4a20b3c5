import Foundation
import Testing
@testable import RecordPermission

/// A program that asks for the microphone without declaring why is stopped before any prompt.
@Suite struct ManifestTests {
    @Test func missingPurposeStringStopsTheProgramBeforeAnyPrompt() async {
        let result = await #expect(processExitsWith: .exitCode(70), observing: [\.standardErrorContent]) {
            let gate = PermissionGate(
                manifest: AppManifest(appIdentifier: "org.example.silent", displayName: "Silent", microphoneUsageDescription: nil),
                locations: TemporaryLocations().locations)
            // A prompt that would grant: the program must stop before reaching it.
            _ = gate.requestAccess(for: .audio, prompt: ScriptedPrompt(.allow))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("NSMicrophoneUsageDescription"), "\(message)")
    }

    @Test func blankPurposeStringStopsTheProgramToo() async {
        await #expect(processExitsWith: .exitCode(70)) {
            let gate = PermissionGate(
                manifest: AppManifest(appIdentifier: "org.example.blank", displayName: "Blank", microphoneUsageDescription: "  \n"),
                locations: TemporaryLocations().locations)
            _ = gate.requestAccess(for: .audio, prompt: ScriptedPrompt(.allow))
        }
    }

    @Test func invalidAppIdentifierStopsTheProgram() async {
        await #expect(processExitsWith: .exitCode(70)) {
            let gate = PermissionGate(
                manifest: AppManifest(appIdentifier: "../escape", displayName: "Bad", microphoneUsageDescription: "why"),
                locations: TemporaryLocations().locations)
            _ = gate.requestAccess(for: .audio, prompt: ScriptedPrompt(.allow))
        }
    }

    @Test func declaredPurposeStringIsUsedAsIs() {
        #expect(testManifest.usageDescription(for: .microphone) == "Tests record a known signal to check it comes back intact.")
        #expect(PermissionResource.microphone.usageDescriptionKey == "NSMicrophoneUsageDescription")
    }
}
