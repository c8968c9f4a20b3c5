import AudioFormat
import Capture
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

    /// The rule holds where devices are opened too, not only where access is asked for: a grant
    /// whose manifest lacks the purpose string (made here through the module's internal
    /// initializer, as no public path can) stops the program before the device is touched — the
    /// exit is 70, not the 69 of a device that does not exist.
    @Test func openingADeviceWithoutAPurposeStringStopsTheProgram() async {
        let result = await #expect(processExitsWith: .exitCode(70), observing: [\.standardErrorContent]) {
            let grant = CaptureGrant(
                manifest: AppManifest(appIdentifier: "org.example.silent", displayName: "Silent", microphoneUsageDescription: nil),
                consent: .stored, resource: .microphone)
            let request = CaptureRequest(device: "hark_no_such_device",
                                         format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000))
            _ = try? CaptureDevice(opening: request, grant: grant)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("NSMicrophoneUsageDescription"), "\(message)")
    }

    /// System audio has its own purpose string: an app that declared only the microphone's is
    /// stopped before it may ask for the system's audio, or open a device with such a grant.
    @Test func systemAudioNeedsItsOwnPurposeString() async {
        let result = await #expect(processExitsWith: .exitCode(70), observing: [\.standardErrorContent]) {
            let gate = PermissionGate(
                manifest: AppManifest(appIdentifier: "org.example.mic", displayName: "Mic", microphoneUsageDescription: "Dictation."),
                locations: PermissionLocations(storeDirectory: "/nonexistent", stateDirectory: "/nonexistent", systemDirectory: "/nonexistent"),
                desktopSwitch: DesktopPrivacySwitch(helperPath: nil))
            _ = gate.requestAccess(for: .systemAudio, prompt: TerminalPrompt())
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("NSAudioCaptureUsageDescription"), "\(message)")
        await #expect(processExitsWith: .exitCode(70)) {
            let grant = CaptureGrant(
                manifest: AppManifest(appIdentifier: "org.example.mic", displayName: "Mic", microphoneUsageDescription: "Dictation."),
                consent: .stored, resource: .systemAudio)
            let request = CaptureRequest(device: "hark_no_such_device",
                                         format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000))
            _ = try? CaptureDevice(opening: request, grant: grant)
        }
    }

    @Test func probingADeviceOrAskingForAnExistingGrantWithoutAPurposeStringStopsTheProgram() async {
        await #expect(processExitsWith: .exitCode(70)) {
            let grant = CaptureGrant(
                manifest: AppManifest(appIdentifier: "org.example.silent", displayName: "Silent", microphoneUsageDescription: ""),
                consent: .stored, resource: .microphone)
            _ = DeviceCapabilities.probe("hark_no_such_device", grant: grant)
        }
        await #expect(processExitsWith: .exitCode(70)) {
            let gate = PermissionGate(
                manifest: AppManifest(appIdentifier: "org.example.silent", displayName: "Silent", microphoneUsageDescription: nil),
                locations: TemporaryLocations().locations)
            _ = gate.existingGrant(for: .audio)
        }
    }

    @Test func declaredPurposeStringIsUsedAsIs() {
        #expect(testManifest.usageDescription(for: .microphone) == "Tests record a known signal to check it comes back intact.")
        #expect(PermissionResource.microphone.usageDescriptionKey == "NSMicrophoneUsageDescription")
    }
}

/// Where hark looks for the user's folders.
@Suite struct PermissionLocationsTests {
    /// A relative HOME would put the settings under whatever folder a command runs in (as root, a
    /// `HOME=relhome` made `/relhome/.config/hark`): only an absolute one is taken.
    @Test func onlyAnAbsoluteHomeIsTaken() {
        let fromPasswords = PermissionLocations.homeFromPasswordDatabase() ?? "/"
        #expect(PermissionLocations.home(fromEnvironment: "/home/someone") == "/home/someone")
        #expect(PermissionLocations.home(fromEnvironment: "relhome") == fromPasswords)
        #expect(PermissionLocations.home(fromEnvironment: nil) == fromPasswords)
    }
}

/// What a store problem tells the user to do.
@Suite struct StoreProblemAdviceTests {
    /// `hark permissions reset` that fails (a file it may not remove) must not advise running
    /// `hark permissions reset`: it said so for "cannot be removed (Permission denied)".
    @Test func resetsOwnFailureDoesNotAdviseAReset() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hark-advice-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let problem = StoreProblem(path: folder + "/dev.hark.cli.json", text: "cannot be removed (Permission denied)", storeDirectory: folder)
        #expect(problem.description.hasSuffix("; run 'hark permissions reset' to fix it"))
        #expect(problem.withoutResetAdvice.description == "the permission store \(folder)/dev.hark.cli.json cannot be removed (Permission denied)")
        // Advice about something in the way stays: a reset cannot mend it, but the user can.
        FileManager.default.createFile(atPath: folder + "/file", contents: Data())
        let blocked = StoreProblem(path: folder + "/file/permissions", text: "cannot be created (Not a directory)",
                                   storeDirectory: folder + "/file/permissions")
        #expect(blocked.withoutResetAdvice.description.hasSuffix("move it aside"), "\(blocked.withoutResetAdvice)")
    }
}
