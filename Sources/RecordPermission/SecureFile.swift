#if canImport(Glibc)
import Glibc
#endif

/// The POSIX calls behind the store and the log: checked reads, atomic replacement, locking.
/// Every file operation of the gate goes through here.
enum SecureFile {
    /// Why a file or directory cannot be trusted to hold consent.
    enum Problem: Error, Equatable {
        case symlink
        case notRegularFile
        case notDirectory
        case wrongOwner(uid: UInt32)
        case writableByOthers(mode: UInt32)
        case tooLarge(bytes: Int)
        case unreadable(errno: Int32)
        /// A directory that could not be made (the access log's, in a folder the user cannot write).
        case uncreatable(errno: Int32)
        /// A file that could not be written (a full or read-only disk).
        case unwritable(errno: Int32)

        /// Whether the disk failed the write (full, read-only, broken), rather than anything about
        /// the file or its folder that the user or a reset could change.
        var isWriteFailure: Bool {
            switch self {
            case .uncreatable(let code), .unwritable(let code): SecureFile.isStorageFailure(code)
            default: false
            }
        }

        /// The system's error number, where one caused it.
        var errorCode: Int32? {
            switch self {
            case .unreadable(let code), .uncreatable(let code), .unwritable(let code): code
            default: nil
            }
        }

        var text: String {
            switch self {
            case .symlink: "is a symbolic link"
            case .notRegularFile: "is not a regular file"
            case .notDirectory: "is not a directory"
            case .wrongOwner(let uid): "is owned by another user (uid \(uid))"
            case .writableByOthers(let mode): "is writable by other users (mode \(String(mode & 0o777, radix: 8)))"
            case .tooLarge(let bytes): "is too large (\(bytes) bytes)"
            case .unreadable(let code): "cannot be read (\(String(cString: strerror(code))))"
            case .uncreatable(let code): "cannot be created (\(String(cString: strerror(code))))"
            case .unwritable(let code): "cannot be written (\(String(cString: strerror(code))))"
            }
        }
    }

    /// Reads a small file that only its owner, the current user, can have written.
    /// Returns nil when it does not exist. Symlinks are refused (`O_NOFOLLOW`), and the checks
    /// apply to the opened descriptor, so a swap between check and read cannot slip through.
    static func readTrusted(_ path: String, maxBytes: Int) throws(Problem) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if descriptor < 0 {
            switch errno {
            case ENOENT: return nil
            case ELOOP: throw .symlink
            default: throw .unreadable(errno: errno)
            }
        }
        defer { close(descriptor) }
        return try readRegularFile(descriptor, maxBytes: maxBytes) { info throws(Problem) in
            guard info.st_uid == geteuid() else { throw .wrongOwner(uid: info.st_uid) }
            guard info.st_mode & 0o022 == 0 else { throw .writableByOthers(mode: info.st_mode) }
        }
    }

    /// Reads a small regular file that anyone may own, following symlinks: the administrator's
    /// policy, owned by root and perhaps linked in by configuration management. Returns nil when
    /// nothing is at `path`, or a path component is not a directory.
    static func readShared(_ path: String, maxBytes: Int) throws(Problem) -> [UInt8]? {
        // O_NONBLOCK: a FIFO planted at the path must not block the gate; fstat then refuses it.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if descriptor < 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw .unreadable(errno: errno)
        }
        defer { close(descriptor) }
        return try readRegularFile(descriptor, maxBytes: maxBytes) { _ throws(Problem) in }
    }

    /// Reads all of an open regular file of at most `maxBytes`, after `check` accepted its status.
    private static func readRegularFile(_ descriptor: Int32, maxBytes: Int,
                                        check: (stat) throws(Problem) -> Void) throws(Problem) -> [UInt8] {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .unreadable(errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notRegularFile }
        try check(info)
        guard Int(info.st_size) <= maxBytes else { throw .tooLarge(bytes: Int(info.st_size)) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var total = 0
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + total, $0.count - total) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(errno: errno) }
            if count == 0 { break }
            total += count
        }
        return Array(bytes.prefix(total))
    }

    /// Whether `code` is the disk failing a write (full, read-only, broken) rather than anything
    /// about a file or folder that the user or a reset could change.
    static func isStorageFailure(_ code: Int32) -> Bool {
        [EROFS, ENOSPC, EDQUOT, EIO, EFBIG].contains(code)
    }

    /// True when anything at all is at `path`, a dangling symlink included.
    /// The corresponding C function is `lstat`.
    static func somethingIsAt(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Removes whatever is at `path` without following it: a file or a symlink (never its target)
    /// is unlinked, a directory is removed with everything in it. Returns false when nothing was
    /// there. This is how `reset` clears an untrusted store, whatever was planted in its place.
    static func removeWithoutFollowing(_ path: String) throws(Problem) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return false }
            throw .unreadable(errno: errno)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            try removeTree(Array(path.utf8CString), in: AT_FDCWD, depth: 0)
        } else if unlink(path) != 0 {
            throw .unreadable(errno: errno)
        }
        return true
    }

    /// Removes the directory `name` (relative to the open directory `parent`) and its contents.
    /// Entries are opened relative to their directory's descriptor with `O_NOFOLLOW`, so a symlink
    /// swapped in mid-walk is unlinked rather than entered. Names stay NUL-terminated bytes: a
    /// planted name need not be UTF-8.
    private static func removeTree(_ name: [CChar], in parent: Int32, depth: Int) throws(Problem) {
        // Nothing we write nests; a deeper tree was built to exhaust the stack.
        guard depth < 16 else { throw .unreadable(errno: ELOOP) }
        let descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(errno: errno) }
        guard let directory = fdopendir(descriptor) else {
            let code = errno
            close(descriptor)
            throw .unreadable(errno: code)
        }
        defer { closedir(directory) }  // closes `descriptor` too
        var names: [[CChar]] = []
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) {
                $0.prefix { $0 != 0 }.map(CChar.init(bitPattern:)) + [0]
            }
            if entryName != [0x2E, 0] && entryName != [0x2E, 0x2E, 0] { names.append(entryName) }  // "." and ".."
        }
        for entryName in names {
            if unlinkat(descriptor, entryName, 0) == 0 { continue }
            // Linux refuses to unlink a directory with EISDIR: walk into it.
            guard errno == EISDIR else { throw .unreadable(errno: errno) }
            try removeTree(entryName, in: descriptor, depth: depth + 1)
        }
        guard unlinkat(parent, name, AT_REMOVEDIR) == 0 else { throw .unreadable(errno: errno) }
    }

    /// Checks that `path` is a directory of ours that others cannot write into.
    static func checkPrivateDirectory(_ path: String) throws(Problem) {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .unreadable(errno: errno) }
        if (info.st_mode & S_IFMT) == S_IFLNK { throw .symlink }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .notDirectory }
        guard info.st_uid == geteuid() else { throw .wrongOwner(uid: info.st_uid) }
        guard info.st_mode & 0o022 == 0 else { throw .writableByOthers(mode: info.st_mode) }
    }

    /// What keeps `path` from being made by the user, if anything: the nearest existing path above
    /// it when that is not a folder (a file where a folder of the path should be), or a folder
    /// the user cannot write into (its mode, a read-only mount). nil when `path` exists or could
    /// be made. Symbolic links are followed, as `mkdir` follows them.
    struct Obstacle {
        let path: String
        /// Not a folder (a file where one should be); else a folder the user cannot write into.
        let isNotAFolder: Bool
        let text: String
    }

    static func obstacle(above path: String) -> Obstacle? {
        var info = stat()
        if stat(path, &info) == 0 { return nil }
        var ancestor = path
        while let slash = ancestor.lastIndex(of: "/") {
            ancestor = slash == ancestor.startIndex ? "/" : String(ancestor[..<slash])
            guard stat(ancestor, &info) == 0 else {
                if ancestor == "/" { return nil }
                continue  // missing, or beneath the obstacle: look further up
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                return Obstacle(path: ancestor, isNotAFolder: true, text: "is not a folder")
            }
            guard access(ancestor, W_OK | X_OK) == 0 else {
                return Obstacle(path: ancestor, isNotAFolder: false, text: "cannot be written (\(String(cString: strerror(errno))))")
            }
            return nil
        }
        return nil
    }

    /// Creates `path` and its missing parents with mode 0700, then checks the last one.
    static func makePrivateDirectory(_ path: String) throws(Problem) {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST { throw .uncreatable(errno: errno) }
        }
        try checkPrivateDirectory(path)
        _ = chmod(path, 0o700)
    }

    /// Replaces `path` atomically with `bytes`, mode 0600: a temporary file in the same directory,
    /// written and fsynced, renamed over `path`, then the directory fsynced so the rename is durable.
    /// Readers see the old file or the new one, never a torn one. Call with the lock held.
    static func replaceAtomically(_ path: String, with bytes: [UInt8]) throws(Problem) {
        let directory = String(path[..<path.lastIndex(of: "/")!])
        let temporary = "\(directory)/.\(path.split(separator: "/").last!).\(getpid()).tmp"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unwritable(errno: errno) }
        var failure: Int32?
        var offset = 0
        while offset < bytes.count && failure == nil {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 { if errno != EINTR { failure = errno } } else { offset += count }
        }
        if failure == nil && fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure == nil && rename(temporary, path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw .unwritable(errno: failure)
        }
        syncDirectory(directory)
    }

    /// Makes a rename or unlink in `directory` durable.
    static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// Runs `body` holding an exclusive `flock` on `lockPath`, so concurrent writers take turns.
    static func withExclusiveLock<T, E: Error>(_ lockPath: String, _ body: () throws(E) -> T) throws(E) -> T {
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        }
        defer { if descriptor >= 0 { close(descriptor) } }  // closing releases the lock
        return try body()
    }

    /// A cheap fingerprint of a path's current state (inode, size, change time, mode), to notice
    /// writes: of the path itself and, when it is a symlink, of what it points to as well (the
    /// administrator's policy may be a link into configuration management).
    static func fingerprint(_ path: String) -> [Int] {
        var link = stat()
        var target = stat()
        let linkState = lstat(path, &link) == 0 ? summary(link) : []
        let targetState = stat(path, &target) == 0 ? summary(target) : []
        return linkState + [-1] + targetState
    }

    private static func summary(_ info: stat) -> [Int] {
        [Int(info.st_ino), Int(info.st_size), Int(info.st_ctim.tv_sec), Int(info.st_ctim.tv_nsec), Int(info.st_mode)]
    }
}
