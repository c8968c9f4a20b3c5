#if canImport(Glibc)
import Glibc
#endif

/// Where the gate keeps and reads its files.
///
/// - Decisions: `$XDG_CONFIG_HOME/hark/permissions/<app identifier>.json` (default `~/.config`).
/// - Access log: `$XDG_STATE_HOME/hark/access-log.jsonl` (default `~/.local/state`).
/// - Administrator policy: `/etc/hark/policy.json`. Only debug builds honour `HARK_SYSTEM_CONFIG_DIR`,
///   so tests can point it elsewhere; a release build always reads `/etc/hark`.
public struct PermissionLocations: Sendable, Hashable {
    public let storeDirectory: String
    public let stateDirectory: String
    public let systemDirectory: String

    public init(storeDirectory: String, stateDirectory: String, systemDirectory: String) {
        self.storeDirectory = storeDirectory
        self.stateDirectory = stateDirectory
        self.systemDirectory = systemDirectory
    }

    /// The locations for the current user, from the environment.
    public static func current() -> PermissionLocations {
        let home = Self.home()
        // XDG: a relative path in these variables is invalid and must be ignored.
        let config = absolute(environment("XDG_CONFIG_HOME")) ?? home + "/.config"
        let state = absolute(environment("XDG_STATE_HOME")) ?? home + "/.local/state"
        var system = "/etc/hark"
        #if DEBUG
        if let override = environment("HARK_SYSTEM_CONFIG_DIR"), override.hasPrefix("/") { system = override }
        #endif
        return PermissionLocations(storeDirectory: config + "/hark/permissions", stateDirectory: state + "/hark",
                                   systemDirectory: system)
    }

    public func storeFile(for appIdentifier: String) -> String { "\(storeDirectory)/\(appIdentifier).json" }
    func lockFile(for appIdentifier: String) -> String { "\(storeDirectory)/.\(appIdentifier).lock" }
    /// Rewritten with a new token by every `deny` and `reset` of `resource`, so a running recording
    /// notices even a reset that found nothing stored to forget (an "Allow Once" recording).
    func revocationStamp(for appIdentifier: String, _ resource: PermissionResource) -> String {
        "\(storeDirectory)/.\(appIdentifier).\(resource.rawValue).revoked"
    }
    public var accessLogFile: String { stateDirectory + "/access-log.jsonl" }
    public var policyFile: String { systemDirectory + "/policy.json" }

    static func absolute(_ path: String?) -> String? {
        guard let path, path.hasPrefix("/") else { return nil }
        return path
    }

    /// The variable's value; nil when unset, empty or not valid UTF-8 (a path hark could only
    /// hold changed, each stray byte made U+FFFD: another path).
    static func environment(_ name: String) -> String? {
        guard let value = getenv(name), let text = String(validatingCString: value) else { return nil }
        return text.isEmpty ? nil : text
    }

    /// The user's home folder: `HOME` when it is an absolute path (a relative one would put hark's
    /// settings wherever the command runs), else the password database's.
    static func home(fromEnvironment variable: String? = environment("HOME")) -> String {
        absolute(variable) ?? absolute(homeFromPasswordDatabase()) ?? "/"
    }

    static func homeFromPasswordDatabase() -> String? {
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
}
