#if canImport(Glibc)
import Glibc
#endif

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
            if SecureFile.somethingIsAt(locations.storeDirectory) {
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
    /// A `denied` also renews the resource's revocation stamp (see `revocationToken(for:)`).
    func write(_ status: AuthorizationStatus, for resource: PermissionResource, setBy: String) throws(StoreProblem) {
        try ensureDirectory()
        try SecureFile.withExclusiveLock(locations.lockFile(for: appIdentifier)) { () throws(StoreProblem) in
            var record = try read() ?? Record(app: appIdentifier, decisions: [:])
            record.decisions[resource.rawValue] = Decision(status: status, setBy: setBy, updated: .now())
            guard let bytes = record.storeBytes else { throw problem(path, "cannot be encoded") }
            // The stamp before the decision (see `resetOrFail`).
            if status == .denied { try renewRevocationStamp(for: [resource]) }
            try replace(path, with: bytes)
        }
    }

    /// Forgets `resource` (or every decision when nil), like `tccutil reset`, and renews the
    /// revocation stamp of each resource forgotten, so recordings running under them stop.
    ///
    /// Also the repair for an untrusted store: whatever sits at the store file's path (a symlink, a
    /// directory, a corrupt file) is removed, never followed; and a store directory that cannot be
    /// trusted (a symlink, dangling or not, another user's, writable by others, not a directory) is
    /// removed with everything in it — nothing it holds could be trusted either. Returns true then:
    /// every decision is gone, whichever was asked for.
    @discardableResult
    func reset(_ resource: PermissionResource?) throws(StoreProblem) -> Bool {
        do throws(StoreProblem) {
            return try resetOrFail(resource)
        } catch {
            // What reset itself cannot do, a second reset cannot either.
            throw error.withoutResetAdvice
        }
    }

    private func resetOrFail(_ resource: PermissionResource?) throws(StoreProblem) -> Bool {
        let directory = locations.storeDirectory
        var removedUntrusted = false
        if SecureFile.somethingIsAt(directory) {
            do throws(SecureFile.Problem) {
                try SecureFile.checkPrivateDirectory(directory)
            } catch {
                do throws(SecureFile.Problem) {
                    _ = try SecureFile.removeWithoutFollowing(directory)
                } catch let failure {
                    throw StoreProblem(path: directory, text: "\(error.text) and cannot be removed (\(failure.text))",
                                       storeDirectory: directory, remedy: "remove or move it aside by hand")
                }
                let parent = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
                SecureFile.syncDirectory(parent.isEmpty ? "/" : parent)
                removedUntrusted = true
            }
        }
        // With no store (a fresh user, or one just removed), an Allow Once recording may still be
        // running: its revocation stamp is written all the same, in a new private directory, so
        // the reset stops it as a deny would.
        try ensureDirectory()
        var forgotten = resource.map { [$0] } ?? PermissionResource.allCases
        if removedUntrusted { forgotten = PermissionResource.allCases }
        return try SecureFile.withExclusiveLock(locations.lockFile(for: appIdentifier)) { () throws(StoreProblem) -> Bool in
            // An untrusted file is removed as a whole; a trusted one keeps the other resources.
            let stored: Record?, trusted: Bool
            do throws(StoreProblem) {
                stored = try read()
                trusted = true
            } catch {
                (stored, trusted) = (nil, false)
                forgotten = PermissionResource.allCases
            }
            // The stamps before the decisions: a disk that cannot take them (full, read-only) leaves
            // every decision as it was, as the failure says (exit 74). Until 2026-11-29 the file went
            // first, and on a full disk its removal made room for one stamp and not the next: the
            // reset failed with the decisions already forgotten. Stamps renewed and decisions not
            // (the disk filled in between) stop the recordings under them, which a reset is for.
            try renewRevocationStamp(for: forgotten)
            if var record = stored {
                for each in forgotten { record.decisions[each.rawValue] = nil }
                if !record.decisions.isEmpty {
                    guard let bytes = record.storeBytes else { throw problem(path, "cannot be encoded") }
                    try replace(path, with: bytes)
                    return false
                }
            }
            do throws(SecureFile.Problem) {
                if try SecureFile.removeWithoutFollowing(path) { SecureFile.syncDirectory(directory) }
            } catch {
                throw problem(path, "cannot be removed" + (error.errorCode.map { " (\(String(cString: strerror($0))))" } ?? ""),
                              isWriteFailure: error.errorCode.map(SecureFile.isStorageFailure) ?? false)
            }
            return !trusted || removedUntrusted
        }
    }

    /// The current revocation token of `resource`: changes with every `deny` or `reset` of it.
    /// Empty when none was ever written or it cannot be read (a watch then relies on the status).
    func revocationToken(for resource: PermissionResource) -> [UInt8] {
        let stamp = locations.revocationStamp(for: appIdentifier, resource)
        return (try? SecureFile.readTrusted(stamp, maxBytes: 256)).flatMap { $0 } ?? []
    }

    /// Writes a new token (process, monotonic and wall-clock time: never the same twice) into the
    /// stamps of `resources`. Call with the lock held.
    private func renewRevocationStamp(for resources: [PermissionResource]) throws(StoreProblem) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let token = Array("\(getpid()) \(now.tv_sec).\(now.tv_nsec) \(WallClockTime.now())\n".utf8)
        for resource in resources {
            do throws(StoreProblem) {
                try replace(locations.revocationStamp(for: appIdentifier, resource), with: token)
            } catch where error.isWriteFailure {
                // A full or read-only disk is the store's, whichever of its files met it first: named
                // by the file users know (the stamps are hidden), in the disk's words.
                throw problem(path, error.text, isWriteFailure: true)
            }
        }
    }

    private func replace(_ file: String, with bytes: [UInt8]) throws(StoreProblem) {
        do throws(SecureFile.Problem) {
            try SecureFile.replaceAtomically(file, with: bytes)
        } catch {
            throw problem(file, error.text, isWriteFailure: error.isWriteFailure)
        }
    }

    private func ensureDirectory() throws(StoreProblem) {
        do throws(SecureFile.Problem) {
            try SecureFile.makePrivateDirectory(locations.storeDirectory)
        } catch {
            throw problem(locations.storeDirectory, error.text, isWriteFailure: error.isWriteFailure)
        }
    }

    /// The store's problem with `path`, and what the user can do about it.
    private func problem(_ path: String, _ text: String, isWriteFailure: Bool = false) -> StoreProblem {
        StoreProblem(path: path, text: text, storeDirectory: locations.storeDirectory, isWriteFailure: isWriteFailure)
    }

    private func fail(path: String, _ text: String) throws(StoreProblem) -> Record? {
        throw problem(path, text)
    }
}

/// Why the permission store is not trusted. It never grants until fixed.
public struct StoreProblem: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let text: String
    /// What the user can do: `hark permissions reset`, which removes and remakes the store's
    /// folder, or, when something above that folder is in the way (which reset leaves alone, as
    /// it is not hark's), that thing; nil where the disk failed (full, read-only), which the text
    /// says and no command of hark's mends.
    public private(set) var remedy: String?
    /// Whether writing failed (the disk), not trust in what is stored.
    public let isWriteFailure: Bool

    init(path: String, text: String, storeDirectory: String, remedy: String? = nil, isWriteFailure: Bool = false) {
        self.path = path
        self.text = text
        self.isWriteFailure = isWriteFailure
        if let remedy {
            self.remedy = remedy
        } else if let obstacle = SecureFile.obstacle(above: storeDirectory) {
            self.remedy = "'\(obstacle.path)' \(obstacle.text), and hark keeps its permissions in '\(storeDirectory)': "
                + (obstacle.isNotAFolder ? "move it aside" : "make it writable")
        } else {
            self.remedy = isWriteFailure ? nil : Self.resetAdvice
        }
    }

    private static let resetAdvice = "run 'hark permissions reset' to fix it"

    /// The same problem met by `hark permissions reset` itself, which must not send the user to
    /// run it again: its own text (the system's reason) is all there is to say.
    var withoutResetAdvice: StoreProblem {
        var copy = self
        if copy.remedy == Self.resetAdvice { copy.remedy = nil }
        return copy
    }

    public var description: String {
        "the permission store \(path) \(text)" + (remedy.map { "; " + $0 } ?? "")
    }
}
