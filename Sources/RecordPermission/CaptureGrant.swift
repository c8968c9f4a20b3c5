/// How consent for a recording was obtained; written to the access log.
public enum ConsentSource: String, Sendable, Hashable, Codable {
    /// A decision remembered in the store (from an earlier prompt or `permissions grant`).
    case stored
    /// "Allow Once" at the prompt: this run only, not stored.
    case once
    /// "Allow" at the prompt just now (and stored).
    case prompt
}

/// Proof that the user allowed this app to capture audio: from the microphone, or (a grant of its
/// own) the system's audio, a sound server's monitor source.
///
/// Only `PermissionGate.requestAccess(for:)` can create one (its initializer is internal to this
/// module), and the capture layer's open function requires one, so no code path can open a capture
/// device without consent. Which of the two a device needs is the caller's to say: the capture
/// layer speaks ALSA and cannot tell a monitor from a microphone; hark's device choice can, through
/// the sound server (`DeviceChoice.resource`).
public struct CaptureGrant: Sendable, Hashable {
    public let manifest: AppManifest
    public let consent: ConsentSource
    /// `.microphone` or `.systemAudio`.
    public let resource: PermissionResource
    /// For a consent given at the prompt: the store as it was when the answer came (see
    /// `PermissionWatch.startsFrom`); nil for a stored one.
    let answeredAgainst: StoreMoment?

    init(manifest: AppManifest, consent: ConsentSource, resource: PermissionResource, answeredAgainst: StoreMoment? = nil) {
        precondition(resource.isCaptureSource, "a capture grant is for the microphone or system audio")
        self.manifest = manifest
        self.consent = consent
        self.resource = resource
        self.answeredAgainst = answeredAgainst
    }

    /// Stops the program if the manifest lacks the purpose string for the grant's resource. Capture
    /// calls this before opening a device, so the rule holds even for a grant kept past its
    /// manifest's change.
    public func requireUsageDescription() {
        manifest.requireUsageDescription(for: resource)
    }
}

/// Proof that the user allowed this app to add recordings to their recordings library.
///
/// Only `PermissionGate.requestAccess(for: .addOnly)` creates one, and `RecordingsLibrary` needs
/// one to name a new file there, so nothing is saved into the library without consent.
public struct LibraryAddGrant: Sendable, Hashable {
    public let manifest: AppManifest
    public let consent: ConsentSource

    init(manifest: AppManifest, consent: ConsentSource) {
        self.manifest = manifest
        self.consent = consent
    }
}

/// The user's decisions as they stood at a moment: the resource's revocation token (renewed by each
/// `deny` and `reset`) and the store file's fingerprint. Taken as a prompt is answered, so a change
/// made while the prompt waited counts as older than the answer.
struct StoreMoment: Sendable, Hashable {
    let revocationToken: [UInt8]
    let storeFingerprint: [Int]
}
