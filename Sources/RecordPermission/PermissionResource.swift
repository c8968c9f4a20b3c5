/// What an app asks permission for, as AVFoundation names the media it captures.
public enum MediaType: Sendable, Hashable {
    /// Audio capture: the microphone.
    case audio
    /// What the system plays (a sound server's monitor source), as Apple's "System Audio Recording"
    /// is a permission apart from the microphone's (Core Audio taps, macOS 14.4).
    case systemAudio

    /// The protected resource this media type needs.
    public var resource: PermissionResource {
        switch self {
        case .audio: .microphone
        case .systemAudio: .systemAudio
        }
    }
}

/// How much of the recordings library an app asks for, as PhotoKit's access levels. Only adding
/// exists: an app that records has no business reading what else the user recorded.
public enum LibraryAccessLevel: Sendable, Hashable {
    case addOnly

    public var resource: PermissionResource { .recordings }
}

/// A protected resource with its own decision in the store and its own purpose string.
public enum PermissionResource: String, Sendable, Hashable, CaseIterable, Codable {
    case microphone
    /// What the system plays: a sound server's monitor source. Neither grant covers the other.
    case systemAudio
    /// Adding recordings to the user's recordings library (add only: never reading or listing it).
    case recordings

    /// The manifest key whose purpose string must be declared before access is requested
    /// (the Info.plist key Apple's systems use).
    public var usageDescriptionKey: String {
        switch self {
        case .microphone: "NSMicrophoneUsageDescription"
        // Apple's key for system audio recording (Core Audio process taps).
        case .systemAudio: "NSAudioCaptureUsageDescription"
        // Modelled on NSPhotoLibraryAddUsageDescription, the photo library's add-only key.
        case .recordings: "NSRecordingsLibraryAddUsageDescription"
        }
    }

    /// How a line names access to it: "microphone access was revoked", "system-audio access …".
    public var accessName: String {
        switch self {
        case .microphone: "microphone"
        case .systemAudio: "system-audio"
        case .recordings: "recordings-library"
        }
    }

    /// Whether a `CaptureGrant` can be for it: what a capture device records.
    public var isCaptureSource: Bool { self == .microphone || self == .systemAudio }

    /// How the prompt names the resource: "… would like to access the microphone."
    public var displayName: String {
        switch self {
        case .microphone: "the microphone"
        case .systemAudio: "the system's audio (what this computer plays)"
        case .recordings: "your recordings library (to add recordings)"
        }
    }
}

/// Whether an app may use a resource, named as AVFoundation names it.
public enum AuthorizationStatus: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The user has not been asked yet: `requestAccess` will prompt.
    case notDetermined
    /// An administrator's policy forbids it; nobody is prompted and the user cannot change it.
    case restricted
    /// The user said no (at the prompt or with `permissions deny`).
    case denied
    /// The user said yes; recording may start without a prompt.
    case authorized

    public var description: String {
        switch self {
        case .notDetermined: "not determined"
        case .restricted: "restricted"
        case .denied: "denied"
        case .authorized: "authorized"
        }
    }
}
