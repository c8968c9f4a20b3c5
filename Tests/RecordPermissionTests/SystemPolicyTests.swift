import Foundation
import Testing
@testable import RecordPermission

/// The administrator's policy file, read as the `Decodable` structs before it read it: what it does
/// not say restricts nobody, and what cannot be read or does not follow the format restricts everyone.
@Suite struct SystemPolicyTests {
    enum Expected: Sendable { case unrestricted, everyone, thisApp, notValid }

    @Test(arguments: [
        (#"{"microphone": {"restricted": true}}"#, Expected.everyone),
        (#"{"microphone": {"restricted": false}}"#, .unrestricted),
        (#"{"microphone": {"restricted": ["org.example.other", "org.example.tests"]}}"#, .thisApp),
        (#"{"microphone": {"restricted": ["org.example.other"]}}"#, .unrestricted),
        (#"{"microphone": {"restricted": []}}"#, .unrestricted),
        (#"{"microphone": {"restricted": null}}"#, .unrestricted),
        (#"{"microphone": {"note": "later versions may add keys"}}"#, .unrestricted),
        (#"{"microphone": null}"#, .unrestricted),
        (#"{"camera": {"restricted": true}}"#, .unrestricted),
        ("{}", .unrestricted),
        ("\n{ \"microphone\" :\n  { \"restricted\" : true }\n}\n", .everyone),
        ("[]", .notValid),
        ("null", .notValid),
        (#"{"microphone": true}"#, .notValid),
        (#"{"microphone": {"restricted": "yes"}}"#, .notValid),
        (#"{"microphone": {"restricted": 1}}"#, .notValid),
        (#"{"microphone": {"restricted": ["org.example.tests", 1]}}"#, .notValid),
        (#"{"microphone": {"restricted": false, "restricted": true}}"#, .notValid),
        (#"{"microphone": {"restricted": false}} {"microphone": {"restricted": true}}"#, .notValid),
        (#"{"microphone": {"restricted": false},}"#, .notValid),
        ("{ not json", .notValid),
        ("", .notValid),
        ("\u{FEFF}{}", .notValid),
    ])
    func verdict(_ text: String, _ expected: Expected) throws {
        let temporary = TemporaryLocations()
        try FileManager.default.createDirectory(atPath: temporary.locations.systemDirectory, withIntermediateDirectories: true)
        try text.write(toFile: temporary.locations.policyFile, atomically: true, encoding: .utf8)
        expect(SystemPolicy(path: temporary.locations.policyFile), for: .microphone, toBe: expected)
    }

    /// The verdict for org.example.tests, each kind in its own words.
    func expect(_ policy: SystemPolicy, for resource: PermissionResource, toBe expected: Expected,
                sourceLocation: SourceLocation = #_sourceLocation) {
        let verdict = policy.verdict(for: resource, appIdentifier: "org.example.tests")
        let path = policy.path
        switch expected {
        case .unrestricted: #expect(verdict == .unrestricted, sourceLocation: sourceLocation)
        case .everyone: #expect(verdict == .restricted(reason: "restricted by the administrator (\(path))"), sourceLocation: sourceLocation)
        case .thisApp:
            #expect(verdict == .restricted(reason: "restricted by the administrator for org.example.tests (\(path))"), sourceLocation: sourceLocation)
        case .notValid:
            #expect(verdict == .restricted(reason: "restricted: the administrator's policy \(path) is not valid"), sourceLocation: sourceLocation)
        }
    }

    /// System audio follows its own key, and the microphone's where the file has none: a policy
    /// written when a monitor was recorded on the microphone's grant keeps restricting it (it
    /// allowed system audio once that had a grant of its own).
    @Test(arguments: [
        (#"{"microphone": {"restricted": true}}"#, Expected.everyone),
        (#"{"microphone": {"restricted": ["org.example.tests"]}}"#, .thisApp),
        (#"{"microphone": {"restricted": true}, "systemAudio": {"restricted": false}}"#, .unrestricted),
        (#"{"microphone": {"restricted": true}, "systemAudio": null}"#, .unrestricted),
        (#"{"microphone": {"restricted": false}, "systemAudio": {"restricted": true}}"#, .everyone),
        (#"{"systemAudio": {"restricted": ["org.example.tests"]}}"#, .thisApp),
        (#"{"systemAudio": true}"#, .notValid),
        ("{}", .unrestricted),
    ])
    func systemAudioVerdict(_ text: String, _ expected: Expected) throws {
        let temporary = TemporaryLocations()
        try FileManager.default.createDirectory(atPath: temporary.locations.systemDirectory, withIntermediateDirectories: true)
        try text.write(toFile: temporary.locations.policyFile, atomically: true, encoding: .utf8)
        let policy = SystemPolicy(path: temporary.locations.policyFile)
        expect(policy, for: .systemAudio, toBe: expected)
        // The recordings library is neither: the microphone's rule does not reach it.
        if !text.contains("systemAudio") && expected != .notValid { expect(policy, for: .recordings, toBe: .unrestricted) }
    }

    @Test func noPolicyRestrictsNobodyAndAnUnreadableOneEveryone() throws {
        let temporary = TemporaryLocations()
        let path = temporary.locations.policyFile
        let policy = SystemPolicy(path: path)
        #expect(policy.verdict(for: .microphone, appIdentifier: "a") == .unrestricted, "no directory")
        try FileManager.default.createDirectory(atPath: temporary.locations.systemDirectory, withIntermediateDirectories: true)
        #expect(policy.verdict(for: .microphone, appIdentifier: "a") == .unrestricted, "no file")
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: temporary.root.path + "/nowhere")
        #expect(policy.verdict(for: .microphone, appIdentifier: "a") == .unrestricted, "a dangling link")

        let cannotBeRead = SystemPolicy.Verdict.restricted(reason: "restricted: the administrator's policy \(path) cannot be read")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(policy.verdict(for: .microphone, appIdentifier: "a") == cannotBeRead, "a directory")
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        #expect(policy.verdict(for: .microphone, appIdentifier: "a") == cannotBeRead, "a FIFO, without blocking")
        try FileManager.default.removeItem(atPath: path)
        try Data(repeating: 0x20, count: SystemPolicy.maxBytes + 1).write(to: URL(fileURLWithPath: path))
        #expect(policy.verdict(for: .microphone, appIdentifier: "a") == cannotBeRead, "oversized")
    }
}
