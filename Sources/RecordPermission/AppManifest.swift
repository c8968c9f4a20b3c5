#if canImport(Glibc)
import Glibc
#endif

/// The app's declaration of who it is and why it wants each resource: the Info.plist equivalent.
///
/// Requesting access to a resource, or opening a device that needs it, without a non-empty purpose
/// string for it is a programmer error: the program is stopped (exit 70) with a message naming the
/// missing key, before any prompt or device access, as Apple's systems terminate such an app.
public struct AppManifest: Sendable, Hashable {
    /// Reverse-DNS identifier that keys the stored decisions, e.g. "dev.hark.cli".
    public let appIdentifier: String
    /// The name the prompt shows, e.g. "hark".
    public let displayName: String
    /// Purpose strings by resource (for the microphone, `NSMicrophoneUsageDescription`).
    public let usageDescriptions: [PermissionResource: String]

    public init(appIdentifier: String, displayName: String, usageDescriptions: [PermissionResource: String]) {
        self.appIdentifier = appIdentifier
        self.displayName = displayName
        self.usageDescriptions = usageDescriptions
    }

    /// A manifest with a microphone purpose string.
    public init(appIdentifier: String, displayName: String, microphoneUsageDescription: String?) {
        self.init(appIdentifier: appIdentifier, displayName: displayName,
                  usageDescriptions: microphoneUsageDescription.map { [.microphone: $0] } ?? [:])
    }

    /// The declared purpose string for `resource`, or nil when missing or blank.
    public func usageDescription(for resource: PermissionResource) -> String? {
        guard let text = usageDescriptions[resource], text.contains(where: { !$0.isWhitespace }) else { return nil }
        return text
    }

    /// Whether the identifier can name a store file: letters, digits, '.', '-', '_', not starting with '.'.
    var hasValidIdentifier: Bool {
        !appIdentifier.isEmpty && appIdentifier.count <= 200 && appIdentifier.first != "."
            && appIdentifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }

    /// Stops the program unless the manifest declares a purpose string for `resource`.
    /// Called before every prompt and every device open.
    public func requireUsageDescription(for resource: PermissionResource) {
        guard hasValidIdentifier else {
            ManifestViolation.stop("the app identifier '\(appIdentifier)' is invalid (use reverse-DNS letters, digits, '.', '-', '_')")
        }
        guard usageDescription(for: resource) != nil else {
            ManifestViolation.stop("""
                \(displayName) must declare \(resource.usageDescriptionKey) in its manifest, a purpose string \
                saying why it needs \(resource.displayName); it was stopped before asking for access
                """)
        }
    }
}

/// A misuse of the permission API by the embedding program: stop at once, with one line on stderr.
enum ManifestViolation {
    /// EX_SOFTWARE: an internal error of the program, not something its user did.
    static let exitCode: Int32 = 70

    static func stop(_ message: String) -> Never {
        let line = "\(message)\n"
        line.utf8CString.withUnsafeBufferPointer { bytes in
            _ = write(STDERR_FILENO, bytes.baseAddress!, bytes.count - 1)
        }
        exit(exitCode)
    }
}
