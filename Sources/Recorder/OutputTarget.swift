import CLinux
import Encoding
#if canImport(Glibc)
import Glibc
#endif

/// Where a recording goes, as the user named it.
public enum OutputDestination: Sendable, Equatable, CustomStringConvertible {
    case file(path: String)
    case standardOutput

    public var description: String {
        switch self {
        case .file(let path): path
        case .standardOutput: "stdout"
        }
    }
}

/// The output's file descriptor, and the promise that a failed start leaves nothing behind.
///
/// A regular file is made without a name (O_TMPFILE) in the directory it goes to, and linked
/// under the requested path only once its first audio has come (`commit()`, by the
/// `SplittingEncoder`): an existing file survives a recording that never started or never got any
/// audio, and one that is refused, fails or is killed (even by SIGKILL, at the consent prompt,
/// say) before then leaves nothing, as the kernel frees a file that was
/// never linked (replacing a file, it is linked under a hidden name an instant before the rename
/// over it). It is named through /proc/self/fd (`linkat` with AT_EMPTY_PATH needs a capability);
/// without /proc hark would not run at all (Swift reads its arguments there). Where the file
/// system cannot make such a file, it is written under a hidden temporary name instead, which a
/// failed start removes (`discard()`) and only a SIGKILL leaves.
/// Standard output, devices and FIFOs are written in place. A path that is a symbolic link is
/// written through, as `arecord` or `flac -o` write: the new file goes where the link points and
/// the link stays (renamed onto the link itself, the recording would replace it).
///
/// `keepsExisting`: the name must be new (a recording added to the recordings library, a name with
/// strftime conversions, a split's later file). It is taken at commit without replacing anything,
/// so two recorders that chose the same name at once (two library recordings started in the same
/// second) cannot write over each other: the second gets "-2", "-3" before the extension
/// (`OutputNaming.numbered`). (A split's later file that loses such a race to another recorder
/// gets the counter after its own: "talk-2-2.flac".)
final class OutputTarget {
    /// A file not yet committed: without a name, or under a hidden temporary one.
    private enum Uncommitted {
        case anonymous
        case hidden(String)
    }

    private(set) var destination: OutputDestination
    let fileDescriptor: Int32
    private let keepsExisting: Bool
    private var uncommitted: Uncommitted?
    /// A new name taken at commit (`keepsExisting`) before the recording started: a failed start,
    /// or a recording that got no audio, removes the file again, as it would one never committed.
    private var claimedNewName: String?
    /// Where the file is linked or renamed to: the requested path with its symbolic links followed.
    private var finalPath: String?

    /// Creates the output. Throws `.cannotCreateOutput` before any device is touched.
    ///
    /// A FIFO nobody reads yet is waited for when `waitingForReader` is given (it is told the path
    /// once, as the wait begins), as arecord and ffmpeg wait for one; without it (a split's later
    /// file) such a FIFO is refused. A stop signal ends the wait (`.stoppedWaitingForReader`).
    init(_ destination: OutputDestination, keepsExisting: Bool = false,
         waitingForReader: ((String) -> Void)? = nil) throws(RecordingError) {
        self.destination = destination
        self.keepsExisting = keepsExisting
        switch destination {
        case .standardOutput:
            fileDescriptor = STDOUT_FILENO
        case .file(let path):
            var info = stat()
            let reachable = stat(path, &info) == 0
            // Links that lead round in a circle: the name leads to no file, and what was renamed
            // over it would replace the first link with a plain file.
            if !reachable && errno == ELOOP { throw .cannotCreateOutput(path: path, reason: Self.errnoText(ELOOP)) }
            if reachable, (info.st_mode & S_IFMT) != S_IFREG {
                if (info.st_mode & S_IFMT) == S_IFDIR {
                    throw .cannotCreateOutput(path: path, reason: "it is a directory")
                }
                fileDescriptor = try Self.openInPlace(path, isFIFO: (info.st_mode & S_IFMT) == S_IFIFO,
                                                      waitingForReader: waitingForReader)
                return
            }
            let target = OutputPath.followingLinks(path)
            let folder = Self.directory(of: target).isEmpty ? "." : Self.directory(of: target)
            // Read-write: after a failed write, salvaging the file reads its header back (pread).
            var descriptor = open(folder, hark_open_tmpfile | O_RDWR | O_CLOEXEC, 0o666)
            var error = errno
            if descriptor >= 0 {
                uncommitted = .anonymous
            } else if error == EOPNOTSUPP || error == EISDIR || error == EINVAL {
                // A file system without O_TMPFILE (or an old kernel): a hidden name.
                let temporary = Self.temporaryName(for: target)
                descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
                error = errno
                if descriptor >= 0 { uncommitted = .hidden(temporary) }
            }
            guard descriptor >= 0 else {
                // A file that is there and writable is still not written in place (a failed start
                // must leave it as it was): the new one is made beside it, which needs the folder.
                let isThere = stat(target, &info) == 0
                let reason = if (error == EACCES || error == EPERM) && isThere {
                    "permission denied: its folder is not writable, and hark writes a new file there and renames it over the old one"
                } else if error == ENOENT && stat(folder, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
                    // The folder is there, but its file system makes no files (procfs, sysfs).
                    "its folder's file system takes no new files"
                } else {
                    Self.errnoText(error)
                }
                throw .cannotCreateOutput(path: path, reason: reason)
            }
            fileDescriptor = descriptor
            finalPath = target
            // A shared lock for as long as the file is written: `hark repair` takes an exclusive
            // one, so it refuses to cut a recording still in progress (advisory; nothing else waits).
            _ = flock(descriptor, LOCK_SH | LOCK_NB)
        }
    }

    /// Whether `path` names something that is written in place rather than replaced: a FIFO, a
    /// device or a socket, as `init` opens it (links followed).
    static func isWrittenInPlace(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) != S_IFREG && (info.st_mode & S_IFMT) != S_IFDIR
    }

    deinit {
        if case .hidden(let temporary) = uncommitted { unlink(temporary) }
        if fileDescriptor != STDOUT_FILENO { close(fileDescriptor) }
    }

    /// Whether the output is a regular file (stdout redirected to one included), which nobody
    /// reads while it is written; false for a pipe, a terminal, a socket or a device.
    var isRegularFile: Bool {
        var info = stat()
        return fstat(fileDescriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Whether the output is a pipe (a FIFO included) or a socket: what has a reader that can go away.
    var isPipeOrSocket: Bool {
        var info = stat()
        guard fstat(fileDescriptor, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFIFO || (info.st_mode & S_IFMT) == S_IFSOCK
    }

    /// Whether the file is one hark made and has not yet committed or discarded; false for stdout,
    /// a FIFO or a device written in place.
    var isUncommittedFile: Bool { uncommitted != nil }

    /// Gives the file its name: called once its first audio has come. With `keepsExisting`, the
    /// name is taken when the output is made, and may change to the first free numbered name
    /// (`destination` says which); called again with the first audio (the name stays), it marks
    /// the file as a recording's, which `discard()` then leaves alone.
    func commit() throws(RecordingError) {
        guard let pending = uncommitted, let finalPath, case .file(let path) = destination else {
            claimedNewName = nil
            return
        }
        if keepsExisting {
            var candidate = finalPath, counter = 2
            while true {
                let error = name(pending, as: candidate)
                if error == 0 { break }
                guard error == EEXIST else { throw .cannotCreateOutput(path: path, reason: Self.errnoText(error)) }
                candidate = OutputNaming.numbered(finalPath, counter)
                counter += 1
            }
            if candidate != finalPath { destination = .file(path: candidate) }
            claimedNewName = candidate
        } else {
            // Replacing what is there in one step: named beside it first, then renamed onto it.
            var temporary = Self.temporaryName(for: finalPath)
            if case .hidden(let name) = pending {
                temporary = name
            } else {
                var error = link(pending, as: temporary)
                if error == EEXIST && unlink(temporary) == 0 { error = link(pending, as: temporary) }
                guard error == 0 else { throw .cannotCreateOutput(path: path, reason: Self.errnoText(error)) }
            }
            guard rename(temporary, finalPath) == 0 else {
                let reason = Self.errnoText(errno)
                unlink(temporary)
                throw .cannotCreateOutput(path: path, reason: reason)
            }
        }
        uncommitted = nil
    }

    /// Removes a file whose recording never started or got no audio: one never committed, or one
    /// that took a new name at the start (not once `commit()` has been called again), while that
    /// name still leads to it (another program may have put a file there since). Idempotent.
    func discard() {
        if case .hidden(let temporary) = uncommitted { unlink(temporary) }
        if let claimedNewName, Self.name(claimedNewName, leadsTo: fileDescriptor) { unlink(claimedNewName) }
        uncommitted = nil
        claimedNewName = nil
    }

    /// Whether `path` itself (not a link there) is the file open on `descriptor`: the same device
    /// and inode, which cannot be another file's while the descriptor holds the file.
    private static func name(_ path: String, leadsTo descriptor: Int32) -> Bool {
        var named = stat(), open = stat()
        return lstat(path, &named) == 0 && fstat(descriptor, &open) == 0 && named.st_dev == open.st_dev && named.st_ino == open.st_ino
    }

    /// Gives the uncommitted file the new name `path` without replacing anything: 0, or the error
    /// (EEXIST when something is there). A hidden name is moved, by a hard link or, on a file
    /// system without them (vfat, exFAT), by a rename that refuses to replace.
    private func name(_ file: Uncommitted, as path: String) -> Int32 {
        guard case .hidden(let temporary) = file else { return link(file, as: path) }
        let error = link(file, as: path)
        if error == 0 {
            unlink(temporary)
            return 0
        }
        guard error == EPERM || error == EOPNOTSUPP || error == ENOSYS else { return error }
        if renameat2(AT_FDCWD, temporary, AT_FDCWD, path, hark_rename_noreplace) == 0 { return 0 }
        let renameError = errno
        guard renameError == EINVAL || renameError == ENOSYS else { return renameError }
        // Neither: look, then rename (a race with another recorder is possible only here).
        var info = stat()
        if lstat(path, &info) == 0 { return EEXIST }
        return rename(temporary, path) == 0 ? 0 : errno
    }

    /// Links the uncommitted file at `path` (a hard link, failing with EEXIST if something is
    /// there): 0, or the error. An anonymous file is linked through /proc/self/fd.
    private func link(_ file: Uncommitted, as path: String) -> Int32 {
        switch file {
        case .anonymous:
            let procPath = "/proc/self/fd/\(fileDescriptor)"
            return linkat(AT_FDCWD, procPath, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno
        case .hidden(let temporary):
            return Glibc.link(temporary, path) == 0 ? 0 : errno
        }
    }

    /// Opens a device or a FIFO to write in place.
    ///
    /// A FIFO is opened without blocking: a blocking open() waits for a reader inside the kernel,
    /// where the stop signals (blocked, for the session's thread to take) could not end the wait,
    /// and hark could then be stopped only by SIGKILL. With no reader (ENXIO) it is tried again
    /// every 50 ms, taking a stop signal between tries. Once open, its writes block again, as on
    /// any pipe.
    private static func openInPlace(_ path: String, isFIFO: Bool,
                                    waitingForReader: ((String) -> Void)?) throws(RecordingError) -> Int32 {
        guard isFIFO else {
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .cannotCreateOutput(path: path, reason: errnoText(errno)) }
            // As stdout on a terminal is refused: the audio would go to the screen (`/dev/tty`).
            if isatty(descriptor) == 1 {
                close(descriptor)
                throw .cannotCreateOutput(path: path, reason: "it is a terminal; give a file, or -o - and a pipe")
            }
            return descriptor
        }
        var isWaiting = false
        while true {
            let descriptor = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if descriptor >= 0 {
                // Opened by name again and again: still the FIFO, not a file put there meanwhile
                // (which would be written over in place).
                var info = stat()
                guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFIFO else {
                    close(descriptor)
                    throw .cannotCreateOutput(path: path, reason: "it was replaced while hark waited for a reader")
                }
                _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
                return descriptor
            }
            let error = errno
            guard error == ENXIO else { throw .cannotCreateOutput(path: path, reason: errnoText(error)) }
            guard let waitingForReader else {
                throw .cannotCreateOutput(path: path, reason: "it is a FIFO and no program is reading it")
            }
            if !isWaiting {
                waitingForReader(path)
                isWaiting = true
            }
            if let signal = StopSignals.waitForStop(milliseconds: 50) {
                throw .stoppedWaitingForReader(path: path, signal: StopSignals.name(of: signal))
            }
        }
    }

    /// Sets aside `bytes` after `offset` in a file whose recording has not started, without changing its size,
    /// so a disk too full for them fails the output now, while whatever has its name is still
    /// there, rather than at its first write, when a file holding nothing (raw) or a header alone
    /// would have replaced it. Returns the errno of a full disk or an exhausted quota, or EFBIG when
    /// the process's file-size limit (`ulimit -f`) ends before them, as the first writes would
    /// find; else 0 (a file system that cannot set room aside, or an output written in place, is
    /// not asked). What a short recording leaves unused is given back when the file is finished
    /// (`synchronize`). The corresponding C functions are `getrlimit` and `fallocate`, with
    /// FALLOC_FL_KEEP_SIZE (which the size limit does not apply to, so it is compared here).
    func setAsideRoom(bytes: Int, after offset: Int) -> Int32 {
        // A library file has taken its new name already, but a failed start still removes it.
        guard isUncommittedFile || claimedNewName != nil, bytes > 0 else { return 0 }
        // No limit is RLIM_INFINITY, all ones (its C macro does not import into Swift).
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max,
           UInt64(offset + bytes) > UInt64(limit.rlim_cur) {
            return EFBIG
        }
        while fallocate(fileDescriptor, hark_falloc_keep_size, off_t(offset), off_t(bytes)) != 0 {
            let error = errno
            if error == EINTR { continue }
            return error == ENOSPC || error == EDQUOT ? error : 0
        }
        return 0
    }

    /// Gives back the room `setAsideRoom` set aside past the end and not written (truncating a
    /// file to its own size frees its blocks past the end), and flushes the file's data to
    /// storage, so a finished recording survives a power cut.
    func synchronize() {
        guard fileDescriptor != STDOUT_FILENO else { return }
        var info = stat()
        if fstat(fileDescriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            while ftruncate(fileDescriptor, info.st_size) != 0 && errno == EINTR {}
        }
        _ = fsync(fileDescriptor)
    }

    private static func temporaryName(for path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return "\(directory(of: path)).\(name).hark-\(getpid())"
    }

    /// The directory part of `path` with its trailing slash ("" for a bare name).
    private static func directory(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[...$0]) } ?? ""
    }

    private static func errnoText(_ code: Int32) -> String {
        switch code {
        case ENOENT: "the directory does not exist"
        case EACCES, EPERM: "permission denied"
        case EROFS: "the file system is read-only"
        default: OutputErrorText.describe(errno: code)
        }
    }
}
