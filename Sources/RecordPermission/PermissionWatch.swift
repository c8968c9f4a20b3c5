/// Notices, during a recording, that the user or the administrator took the microphone away:
/// `hark permissions deny` or `reset` from another terminal, or a new restriction.
///
/// Create it *before* asking for consent, so a change that lands between the decision and the
/// start of the recording (while the device opens) is not mistaken for the state to keep.
///
/// `isRevoked(consent:)` costs four `stat` calls and one small read while nothing changed; it
/// re-reads the store and the policy only when their fingerprints (inode, size, change time, mode)
/// move. Call it about once a second from the session's thread, never from the capture thread.
public struct PermissionWatch {
    private let gate: PermissionGate
    private let resource: PermissionResource
    private var storeFingerprint: [Int]
    private var policyFingerprint: [Int]
    /// Renewed by every `deny` and `reset` of the resource; see `PermissionStore.revocationToken(for:)`.
    private let revocationToken: [UInt8]

    public init(gate: PermissionGate, resource: PermissionResource = .microphone) {
        self.gate = gate
        self.resource = resource
        storeFingerprint = SecureFile.fingerprint(gate.store.path)
        policyFingerprint = SecureFile.fingerprint(gate.locations.policyFile)
        revocationToken = gate.store.revocationToken(for: resource)
    }

    /// True once the resource was denied, reset or restricted since the watch was created.
    ///
    /// - A `deny` or `reset` of the resource revokes every kind of consent, "Allow Once" included
    ///   (nothing is stored for it, so only the revocation stamp shows the reset).
    /// - Otherwise a change of the store or the policy is judged by the status it leaves: denied
    ///   or restricted revokes; notDetermined revokes a stored consent but is the normal state of
    ///   an "Allow Once" one; authorized (a grant just stored by the prompt) keeps recording.
    public mutating func isRevoked(consent: ConsentSource) -> Bool {
        if gate.store.revocationToken(for: resource) != revocationToken { return true }
        let store = SecureFile.fingerprint(gate.store.path)
        let policy = SecureFile.fingerprint(gate.locations.policyFile)
        guard store != storeFingerprint || policy != policyFingerprint else { return false }
        storeFingerprint = store
        policyFingerprint = policy
        switch gate.statusDetail(for: resource).status {
        case .authorized: return false
        case .notDetermined: return consent != .once
        case .denied, .restricted: return true
        }
    }
}
