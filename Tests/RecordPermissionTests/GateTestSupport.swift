import Foundation
@testable import RecordPermission

/// A prompt that answers from a script and counts how often it was asked.
final class ScriptedPrompt: ConsentPrompting, @unchecked Sendable {
    private let answer: PromptAnswer?
    private(set) var askedCount = 0
    private(set) var lastPurpose: String?

    init(_ answer: PromptAnswer?) { self.answer = answer }

    func ask(appName: String, resource: PermissionResource, purpose: String) -> PromptAnswer? {
        askedCount += 1
        lastPurpose = purpose
        return answer
    }
}

/// Store, state and system dirs in a fresh temp dir, removed with the value.
final class TemporaryLocations {
    let root: URL
    let locations: PermissionLocations

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hark-gate-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        locations = PermissionLocations(storeDirectory: root.path + "/config/hark/permissions",
                                        stateDirectory: root.path + "/state/hark", systemDirectory: root.path + "/etc")
    }

    deinit { try? FileManager.default.removeItem(at: root) }
}

let testManifest = AppManifest(appIdentifier: "org.example.tests", displayName: "Tests",
                               microphoneUsageDescription: "Tests record a known signal to check it comes back intact.")
