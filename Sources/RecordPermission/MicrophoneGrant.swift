/// How consent for a recording was obtained; written to the access log.
public enum ConsentSource: String, Sendable, Hashable, Codable {
    /// A decision remembered in the store (from an earlier prompt or `permissions grant`).
    case stored
    /// "Allow Once" at the prompt: this run only, not stored.
    case once
    /// "Allow" at the prompt just now (and stored).
    case prompt
}

/// Proof that the user allowed this app to use the microphone.
///
/// Only `PermissionGate.requestAccess(for:)` can create one (its initializer is internal to this
/// module), and the capture layer's open function requires one, so no code path can open a capture
/// device without consent.
public struct MicrophoneGrant: Sendable, Hashable {
    public let manifest: AppManifest
    public let consent: ConsentSource

    init(manifest: AppManifest, consent: ConsentSource) {
        self.manifest = manifest
        self.consent = consent
    }

    /// Stops the program if the manifest lacks a microphone purpose string. Capture calls this
    /// before opening a device, so the rule holds even for a grant kept past its manifest's change.
    public func requireUsageDescription() {
        manifest.requireUsageDescription(for: .microphone)
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
