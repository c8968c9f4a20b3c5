#if canImport(Glibc)
import Glibc
#endif

/// Notices, during a recording, that the user or the administrator took the microphone away:
/// `hark permissions deny` or `reset` from another terminal, a new restriction, or the desktop's
/// microphone switch turned off.
///
/// Create it *before* asking for consent, so a change that lands between the decision and the
/// start of the recording (while the device opens) is not mistaken for the state to keep.
///
/// `isRevoked(consent:)` costs four `stat` calls and one small read while nothing changed; it
/// re-reads the store and the policy only when their fingerprints (inode, size, change time, mode)
/// move. Call it from the session's thread, never from the capture thread: whenever one of
/// `wakeDescriptors` is readable (the store's, the stamps' or the policy's directory changed; the
/// desktop switch reported), which it then reads, or about once a second where `needsPolling`.
public struct PermissionWatch {
    private let gate: PermissionGate
    private let resource: PermissionResource
    private var storeFingerprint: [Int]
    private var policyFingerprint: [Int]
    /// Renewed by every `deny` and `reset` of the resource; see `PermissionStore.revocationToken(for:)`.
    private var revocationToken: [UInt8]
    /// Once `isRevoked` said true: what happened, as the recording's last line says it
    /// ("microphone access was revoked").
    public private(set) var revocation: String?
    /// Changes in the directories of the store (and its revocation stamps) and of the policy.
    private let directories: DirectoryWatch
    /// Whether the desktop switch could not be read, as the user was last told (at the start,
    /// through `desktopSwitchAtStart()`, then through `takeWarning()`).
    private var switchUnreadableSaid = false
    /// A warning for the user, taken by `takeWarning()`.
    private var pendingWarning: String?

    public init(gate: PermissionGate, resource: PermissionResource = .microphone) {
        self.gate = gate
        self.resource = resource
        storeFingerprint = SecureFile.fingerprint(gate.store.path)
        policyFingerprint = SecureFile.fingerprint(gate.locations.policyFile)
        revocationToken = gate.store.revocationToken(for: resource)
        directories = DirectoryWatch(directories: [gate.locations.storeDirectory, gate.locations.systemDirectory]
                                     + Self.linkedDirectory(of: gate.locations.policyFile))
    }

    /// The directory a policy file that is a symbolic link (into a configuration-management
    /// checkout, say) resolves into, when it is another: a change there raises no event in the
    /// policy's own directory, and without a status line nothing else would wake the session.
    /// The corresponding C function is `realpath`.
    private static func linkedDirectory(of file: String) -> [String] {
        guard let resolved = realpath(file, nil) else { return [] }
        defer { free(resolved) }
        let target = String(cString: resolved)
        let directory = String(target[..<(target.lastIndex(of: "/") ?? target.startIndex)])
        let own = String(file[..<(file.lastIndex(of: "/") ?? file.startIndex)])
        return directory.isEmpty || directory == own ? [] : [directory]
    }

    /// Takes `grant` into account once access was asked for (the watch was made before, so a
    /// change while the device opens is seen): an answer at the prompt is newer than any `deny`
    /// or `reset` made while the prompt waited, so only a change of the store after the answer
    /// revokes. The administrator's policy keeps its baseline from before: a restriction made while
    /// the prompt waited still stops the recording.
    public mutating func startsFrom(_ grant: CaptureGrant) {
        guard let moment = grant.answeredAgainst else { return }
        revocationToken = moment.revocationToken
        storeFingerprint = moment.storeFingerprint
    }

    /// What to sleep on between checks: readable when something the watch looks at may have
    /// changed. The desktop switch's pipe is asked for each time: it closes when the helper ends.
    public var wakeDescriptors: [Int32] {
        [directories.descriptor, resource == .microphone ? gate.desktopSwitch.changeDescriptor ?? -1 : -1].filter { $0 >= 0 }
    }

    /// True where no change notification is available (no inotify, or a directory it could not
    /// watch): the caller must then call `isRevoked` about twice a second. It can become true
    /// during a recording (a directory created then could not be watched), so ask before each wait.
    public var needsPolling: Bool { !directories.isAvailable }

    /// The desktop switch's reading when the recording starts, which the caller says when it is
    /// `.unreadable`; from then on `takeWarning()` says when it can no longer be read.
    public mutating func desktopSwitchAtStart() -> DesktopPrivacySwitch.Reading {
        let reading = gate.desktopSwitch.reading()
        if case .unreadable = reading { switchUnreadableSaid = true }
        return reading
    }

    /// A line for the user about the watch itself, once: the desktop switch could no longer be
    /// read during the recording (its helper ended too often). The recording goes on, as one that
    /// starts with the switch unreadable does, but it must not pass for the switch still on.
    public mutating func takeWarning() -> String? {
        defer { pendingWarning = nil }
        return pendingWarning
    }

    /// True once the resource was denied, reset or restricted since the watch was created.
    ///
    /// - A `deny` or `reset` of the resource revokes every kind of consent, "Allow Once" included
    ///   (nothing is stored for it, so only the revocation stamp shows the reset).
    /// - Otherwise a change of the store or the policy is judged by the status it leaves: denied
    ///   or restricted revokes; notDetermined revokes a stored consent but is the normal state of
    ///   an "Allow Once" one; authorized (a grant just stored by the prompt) keeps recording.
    /// - The desktop's microphone switch turned off revokes the microphone (the helper reports the
    ///   change as it happens; reading it here is one non-blocking read).
    public mutating func isRevoked(consent: ConsentSource) -> Bool {
        directories.drain()
        let revoked = "\(resource.accessName) access was revoked"
        if gate.store.revocationToken(for: resource) != revocationToken { return revoke(revoked) }
        if resource == .microphone {
            switch gate.desktopSwitch.reading() {
            case .microphoneOff: return revoke("microphone access was turned off in the desktop's privacy settings")
            case .unreadable(let reason) where !switchUnreadableSaid:
                switchUnreadableSaid = true
                pendingWarning = "warning: the desktop's microphone switch can no longer be read (\(reason)); "
                    + "the recording goes on without it"
            case .unreadable: break
            // Read again (a helper that answered late): losing it again is said again.
            case .microphoneOn, .absent: switchUnreadableSaid = false
            }
        }
        let store = SecureFile.fingerprint(gate.store.path)
        let policy = SecureFile.fingerprint(gate.locations.policyFile)
        guard store != storeFingerprint || policy != policyFingerprint else { return false }
        storeFingerprint = store
        policyFingerprint = policy
        let detail = gate.statusDetail(for: resource)
        switch detail.status {
        case .authorized: return false
        case .notDetermined: return consent != .once && revoke(revoked)
        case .denied: return revoke(revoked)
        case .restricted: return revoke("\(resource.accessName) access was \(detail.note ?? "restricted by the administrator")")
        }
    }

    private mutating func revoke(_ reason: String) -> Bool {
        revocation = revocation ?? reason
        return true
    }
}
