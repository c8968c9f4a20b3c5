import Foundation
import Testing
@testable import RecordPermission

/// A store directory that cannot be trusted never grants, and `reset` — the command every refusal
/// names — repairs it, so the user is never sent round in a loop.
@Suite struct StoreRepairTests {
    enum Damage: String, CaseIterable {
        case writableByOthers, symlinkToAnotherDirectory, danglingSymlink, fileInPlaceOfTheDirectory
    }

    @Test(arguments: Damage.allCases)
    func aDamagedStoreDirectoryNeverGrantsAndResetRepairsIt(_ damage: Damage) throws {
        let temporary = TemporaryLocations()
        let gate = PermissionGate(manifest: testManifest, locations: temporary.locations)
        try gate.setDecision(.authorized, for: .microphone)
        let directory = temporary.locations.storeDirectory
        let elsewhere = temporary.root.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        // A granting store planted where the link points: it must not be read through the link.
        try FileManager.default.copyItem(atPath: gate.store.path, toPath: elsewhere + "/\(testManifest.appIdentifier).json")
        switch damage {
        case .writableByOthers:
            chmod(directory, 0o777)
        case .symlinkToAnotherDirectory, .danglingSymlink:
            try FileManager.default.removeItem(atPath: directory)
            let target = damage == .danglingSymlink ? temporary.root.path + "/nowhere" : elsewhere
            try FileManager.default.createSymbolicLink(atPath: directory, withDestinationPath: target)
        case .fileInPlaceOfTheDirectory:
            try FileManager.default.removeItem(atPath: directory)
            try Data("{}".utf8).write(to: URL(fileURLWithPath: directory))
        }

        let detail = gate.statusDetail(for: .microphone)
        #expect(detail.status == .denied, "\(damage): never granted")
        #expect(detail.note?.contains("hark permissions reset") == true, "\(damage): \(detail.note ?? "no note")")
        guard case .refused = gate.requestAccess(for: .audio, prompt: ScriptedPrompt(.allow)) else {
            Issue.record("\(damage): a damaged store must not grant, nor prompt")
            return
        }
        #expect(throws: PermissionChangeError.self, "\(damage): nothing is written into it") {
            try gate.setDecision(.authorized, for: .microphone)
        }

        try gate.reset(.microphone)
        #expect(gate.statusDetail(for: .microphone).status == .notDetermined, "\(damage): reset repaired it")
        try gate.setDecision(.authorized, for: .microphone)
        #expect(gate.authorizationStatus(for: .audio) == .authorized)
        var info = stat()
        #expect(lstat(directory, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_mode & 0o777 == 0o700)
        #expect(FileManager.default.fileExists(atPath: elsewhere + "/\(testManifest.appIdentifier).json"),
                "\(damage): a link's target is never removed, only the link")
    }
}
