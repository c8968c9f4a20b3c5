import RecordPermission

/// hark's own manifest, compiled into the binary (the Info.plist equivalent).
enum HarkManifest {
    static let manifest = AppManifest(
        appIdentifier: PermissionGate.settingsAppIdentifier,
        displayName: "hark",
        usageDescriptions: [
            .microphone: "hark records audio from the capture device you choose into the file or pipe you name, only while it shows that it is recording.",
            .systemAudio: "hark records what this computer plays only when you name a monitor source (what the system plays) with -D, into the file or pipe you name, only while it shows that it is recording.",
            .recordings: "When you record without -o, hark saves the new recording in your recordings library. It only adds files there; it never reads, lists or replaces what is already in it.",
        ]
    )

    static var gate: PermissionGate { PermissionGate(manifest: manifest) }
}
