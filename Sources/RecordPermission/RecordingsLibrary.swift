#if canImport(Glibc)
import Glibc
#endif

/// The user's recordings library: the `Recordings` folder of the XDG music directory
/// (`XDG_MUSIC_DIR`, from the environment or `$XDG_CONFIG_HOME/user-dirs.dirs`), or `~/Recordings`
/// when no music directory is set.
///
/// Saving there is a protected resource of its own (`.recordings`), granted add-only, as the photo
/// library's add-only access: with a `LibraryAddGrant` an app may name a new file in the library,
/// and nothing here reads, lists or replaces what the library already holds. What hark saved is
/// known from the access log (`hark list`), not by looking into the folder.
public struct RecordingsLibrary: Sendable, Hashable {
    /// The library folder, absolute.
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// The library of the current user, from the environment.
    public static func current() -> RecordingsLibrary {
        let home = PermissionLocations.home()
        let config = PermissionLocations.absolute(PermissionLocations.environment("XDG_CONFIG_HOME")) ?? home + "/.config"
        let music = musicDirectory(environment: PermissionLocations.environment("XDG_MUSIC_DIR"),
                                   userDirs: readSmallFile(config + "/user-dirs.dirs"), home: home)
        return RecordingsLibrary(directory: (music ?? home) + "/Recordings")
    }

    /// The music directory as xdg-user-dirs defines it: the environment wins, then the
    /// `XDG_MUSIC_DIR="$HOME/…"` line of user-dirs.dirs. A value that is the home directory itself
    /// means "disabled" there, and a relative one is invalid; both give nil.
    static func musicDirectory(environment: String?, userDirs: String?, home: String) -> String? {
        func usable(_ path: String) -> String? {
            let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
            return trimmed.hasPrefix("/") && trimmed != home ? trimmed : nil
        }
        if let environment { return usable(environment) }
        for line in (userDirs ?? "").split(separator: "\n") where line.hasPrefix("XDG_MUSIC_DIR=") {
            var value = String(line.dropFirst("XDG_MUSIC_DIR=".count))
            guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return nil }
            value = String(value.dropFirst().dropLast())
            if value.hasPrefix("$HOME") { value = home + value.dropFirst("$HOME".count) }
            return usable(value)
        }
        return nil
    }

    /// Names a new recording in the library, `rec-YYYYMMDD-HHMMSS.<ext>` in local time, with -2,
    /// -3, … when that name is taken; creates the folder (mode 0700: recordings are private) when
    /// it is missing. Needs the add-only grant. For a program that hands another a path
    /// (`samples/VoiceMemo`); hark itself takes `newRecordingPattern`.
    public func newRecordingPath(grant: LibraryAddGrant, fileExtension: String,
                                 at time: WallClockTime = .now()) throws(LibraryError) -> LibraryName {
        grant.manifest.requireUsageDescription(for: .recordings)
        var madeFolders: [String] = []
        try createDirectory(directory, made: &madeFolders)
        var seconds = time_t(time.secondsSinceEpoch.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, Self.timeStamp, &parts)
        let stamp = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var candidate = "\(directory)/rec-\(stamp).\(fileExtension)"
        var counter = 2
        var info = stat()
        while lstat(candidate, &info) == 0 {
            candidate = "\(directory)/rec-\(stamp)-\(counter).\(fileExtension)"
            counter += 1
        }
        return LibraryName(path: candidate, madeFolders: madeFolders)
    }

    /// The time in a recording's name (strftime): `rec-20261127-091255.flac`.
    private static let timeStamp = "%Y%m%d-%H%M%S"

    /// A name pattern for a new recording: `rec-` and the time, as strftime expands it when each
    /// file starts (hark's first file when the recording starts, after the consent prompt; each
    /// later part of a split, or each sound-activated segment, when its first sample was
    /// captured), so a file is named for its audio and not for when hark was started or armed.
    /// The library folder is made now; a '%' in its own path is doubled, which strftime gives
    /// back as one.
    public func newRecordingPattern(grant: LibraryAddGrant, fileExtension: String) throws(LibraryError) -> LibraryName {
        grant.manifest.requireUsageDescription(for: .recordings)
        var madeFolders: [String] = []
        try createDirectory(directory, made: &madeFolders)
        let escaped = String(directory.flatMap { $0 == "%" ? ["%", "%"] : [$0] })
        return LibraryName(path: "\(escaped)/rec-\(Self.timeStamp).\(fileExtension)", madeFolders: madeFolders)
    }

    /// Whether `path` (absolute, its directory's links resolved, as the access log has it) names a
    /// file inside the library: the folder as configured, or as it resolves (a link on the way).
    /// A path with `.` or `..` in it (logged by hark before 2026-11-29) is not taken as inside.
    public func contains(_ path: String) -> Bool {
        guard !path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else { return false }
        if path.hasPrefix(directory + "/") { return true }
        guard let resolved = realpath(directory, nil) else { return false }
        defer { free(resolved) }
        return path.hasPrefix(String(cString: resolved) + "/")
    }

    /// Makes `path` and its missing parents, adding those it made to `made`, outermost first.
    private func createDirectory(_ path: String, made: inout [String]) throws(LibraryError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw LibraryError(message: "the recordings library \(path) is not a directory") }
            return
        }
        let parent = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
        if !parent.isEmpty && stat(parent, &info) != 0 { try createDirectory(parent, made: &made) }
        if mkdir(path, path == directory ? 0o700 : 0o755) == 0 {
            made.append(path)
        } else if errno != EEXIST {
            throw LibraryError(message: "cannot create the recordings library \(path): \(String(cString: strerror(errno)))")
        }
    }

    private static func readSmallFile(_ path: String) -> String? {
        guard let bytes = try? SecureFile.readShared(path, maxBytes: 64 * 1024) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A new recording's name in the library, and the folders made for it.
public struct LibraryName: Sendable, Equatable {
    /// The file's path: for hark's own recordings a strftime pattern of its files' paths
    /// (`newRecordingPattern`), else the one path (`newRecordingPath`).
    public let path: String
    /// The folders made to hold it, outermost first (none when the library existed).
    public let madeFolders: [String]

    /// Removes the folders made for this name, innermost first, as long as they are empty: for a
    /// recording that never started (the microphone refused at its prompt, a device that would
    /// not open), so nothing of it is left behind. `rmdir` removes only an empty folder, so
    /// anything put there meanwhile (another recording's file) stays, and its parents with it.
    /// (Another hark that has made its file in the new folder without a name yet, O_TMPFILE,
    /// holds nothing rmdir can see: its commit then fails with "the directory does not exist", a
    /// window the length of a consent prompt answered No beside a Yes, left as it is.)
    public func withdraw() {
        for folder in madeFolders.reversed() where rmdir(folder) != 0 { return }
    }
}

/// The recordings library cannot take a new file; the message says why.
public struct LibraryError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

