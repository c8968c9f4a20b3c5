import RecordPermission

/// hark's own manifest, compiled into the binary (the Info.plist equivalent).
enum HarkManifest {
    static let manifest = AppManifest(
        appIdentifier: PermissionGate.settingsAppIdentifier,
        displayName: "hark",
        microphoneUsageDescription: "hark records audio from the capture device you choose into the file or pipe you name, only while it shows that it is recording."
    )

    static var gate: PermissionGate { PermissionGate(manifest: manifest) }
}
