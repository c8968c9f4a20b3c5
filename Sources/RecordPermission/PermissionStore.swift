/// The user's remembered decisions for one app: `<store dir>/<app identifier>.json`.
///
/// Only `authorized` and `denied` are stored; a resource with no entry is `notDetermined`. A store
/// that cannot be trusted (corrupt, a symlink, another user's, writable by others, oversized, a
/// directory) never grants: its problem is reported with the command that fixes it.
struct PermissionStore {
    let locations: PermissionLocations
    let appIdentifier: String

    /// A decision as stored.
    struct Decision: Equatable {
        var status: AuthorizationStatus
        /// "prompt" or "command".
        var setBy: String
        var updated: WallClockTime
    }

    /// The file's contents. `PermissionStoreFormat.swift` reads and writes it.
    struct Record: Equatable {
        var format: Int = 1
        var app: String
        /// Keyed by resource name. Every entry must read as a decision, known resource or not.
        var decisions: [String: Decision]
    }

    static let maxBytes = 64 * 1024

    var path: String { locations.storeFile(for: appIdentifier) }

    /// The stored decision for `resource`: nil when none, or the reason the store is not trusted.
    func decision(for resource: PermissionResource) throws(StoreProblem) -> Decision? {
        try read()?.decisions[resource.rawValue]
    }

    func read() throws(StoreProblem) -> Record? {
        do throws(SecureFile.Problem) {
            if SecureFile.exists(locations.storeDirectory) {
                try SecureFile.checkPrivateDirectory(locations.storeDirectory)
            }
        } catch {
            return try fail(path: locations.storeDirectory, error.text)
        }
        let bytes: [UInt8]
        do throws(SecureFile.Problem) {
            guard let contents = try SecureFile.readTrusted(path, maxBytes: Self.maxBytes) else { return nil }
            bytes = contents
        } catch {
            return try fail(path: path, error.text)
        }
        guard let record = Record(storeBytes: bytes) else {
            return try fail(path: path, bytes.isEmpty ? "is empty" : "is corrupt (not a valid permission record)")
        }
        guard record.app == appIdentifier else { return try fail(path: path, "belongs to another app ('\(record.app)')") }
        return record
    }

    /// Stores `status` for `resource`, keeping the other decisions. Refuses an untrusted store.
    func write(_ status: AuthorizationStatus, for resource: PermissionResource, setBy: String) throws(StoreProblem) {
        try ensureDirectory()
        try SecureFile.withExclusiveLock(locations.lockFile(for: appIdentifier)) { () throws(StoreProblem) in
            var record = try read() ?? Record(app: appIdentifier, decisions: [:])
            record.decisions[resource.rawValue] = Decision(status: status, setBy: setBy, updated: .now())
            guard let bytes = record.storeBytes else { throw StoreProblem(path: path, text: "cannot be encoded") }
            do throws(SecureFile.Problem) {
                try SecureFile.replaceAtomically(path, with: bytes)
            } catch {
                throw StoreProblem(path: path, text: "cannot be written: \(error.text)")
            }
        }
    }

    /// Forgets `resource` (or every decision when nil), like `tccutil reset`. Also the repair for an
    /// untrusted store: whatever sits at the store's path (a symlink, a directory, a corrupt file) is
    /// removed, never followed.
    func reset(_ resource: PermissionResource?) throws(StoreProblem) {
        guard SecureFile.exists(locations.storeDirectory) else { return }
        try ensureDirectory()
        try SecureFile.withExclusiveLock(locations.lockFile(for: appIdentifier)) { () throws(StoreProblem) in
            if let resource, var record = try? read(), record.decisions.count > 1 {
                record.decisions[resource.rawValue] = nil
                guard let encoded = record.storeBytes else { return }
                do throws(SecureFile.Problem) {
                    try SecureFile.replaceAtomically(path, with: encoded)
                } catch {
                    throw StoreProblem(path: path, text: "cannot be written: \(error.text)")
                }
                return
            }
            do throws(SecureFile.Problem) {
                guard try SecureFile.removeWithoutFollowing(path) else { return }  // nothing to forget
            } catch {
                throw StoreProblem(path: path, text: "cannot be removed")
            }
            SecureFile.syncDirectory(locations.storeDirectory)
        }
    }

    private func ensureDirectory() throws(StoreProblem) {
        do throws(SecureFile.Problem) {
            try SecureFile.makePrivateDirectory(locations.storeDirectory)
        } catch {
            throw StoreProblem(path: locations.storeDirectory, text: error.text)
        }
    }

    private func fail(path: String, _ text: String) throws(StoreProblem) -> Record? {
        throw StoreProblem(path: path, text: text)
    }
}

/// Why the permission store is not trusted. It never grants until fixed.
public struct StoreProblem: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let text: String

    public var description: String {
        "the permission store \(path) \(text); run 'hark permissions reset' to fix it"
    }
}
