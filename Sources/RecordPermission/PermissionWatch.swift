/// Notices, during a recording, that the user or the administrator took the microphone away:
/// `hark permissions deny` or `reset` from another terminal, or a new restriction.
///
/// `isRevoked()` costs two `lstat` calls while nothing changed; it re-reads the store and the policy
/// only when their fingerprints (inode, size, change time, mode) move. Call it about once a second
/// from the session's thread, never from the capture thread.
public struct PermissionWatch {
    private let gate: PermissionGate
    private let resource: PermissionResource
    private var storeFingerprint: [Int]
    private var policyFingerprint: [Int]

    public init(gate: PermissionGate, resource: PermissionResource = .microphone) {
        self.gate = gate
        self.resource = resource
        storeFingerprint = SecureFile.fingerprint(gate.store.path)
        policyFingerprint = SecureFile.fingerprint(gate.locations.policyFile)
    }

    /// True once the store or policy changed so that the resource is no longer authorized. A grant
    /// for this run only ("Allow Once") is revoked by any change that does not authorize it.
    public mutating func isRevoked() -> Bool {
        let store = SecureFile.fingerprint(gate.store.path)
        let policy = SecureFile.fingerprint(gate.locations.policyFile)
        guard store != storeFingerprint || policy != policyFingerprint else { return false }
        storeFingerprint = store
        policyFingerprint = policy
        return gate.statusDetail(for: resource).status != .authorized
    }
}
