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
/// under the requested path only once capture has started (`commit()`): an existing file survives
/// a recording that never started, and one that is refused, fails or is killed (even by SIGKILL,
/// at the consent prompt, say) before then leaves nothing at all, as the kernel frees a file that
/// was never linked. Where the file system cannot make such a file, it is written under a hidden
/// temporary name instead, which a failed start removes (`discard()`) and only a SIGKILL leaves.
/// Standard output, devices and FIFOs are written in place. A path that is a symbolic link is
/// written through, as `arecord` or `flac -o` write: the new file goes where the link points and
/// the link stays (renamed onto the link itself, the recording would replace it).
///
/// `keepsExisting`: the name must be new (a recording added to the recordings library, a split's
/// later file). It is taken at commit without replacing anything, so two recorders that chose the
/// same name at once (two library recordings started in the same second) cannot write over each
/// other: the second gets "-2", "-3" before the extension (`OutputNaming.numbered`).
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
    /// A new name taken at commit (`keepsExisting`) before the recording started: a failed start
    /// removes the file again, as it would one never committed.
    private var claimedNewName: String?
    /// Where the file is linked or renamed to: the requested path with its symbolic links followed.
    private var finalPath: String?

    /// Creates the output. Throws `.cannotCreateOutput` before any device is touched.
    init(_ destination: OutputDestination, keepsExisting: Bool = false) throws(RecordingError) {
        self.destination = destination
        self.keepsExisting = keepsExisting
        switch destination {
        case .standardOutput:
            fileDescriptor = STDOUT_FILENO
        case .file(let path):
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
                if (info.st_mode & S_IFMT) == S_IFDIR {
                    throw .cannotCreateOutput(path: path, reason: "it is a directory")
                }
                let descriptor = open(path, O_WRONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw .cannotCreateOutput(path: path, reason: Self.errnoText()) }
                fileDescriptor = descriptor
                return
            }
            let target = OutputPath.followingLinks(path)
            // Read-write: after a failed write, salvaging the file reads its header back (pread).
            var descriptor = open(Self.directory(of: target).isEmpty ? "." : Self.directory(of: target),
                                  hark_open_tmpfile | O_RDWR | O_CLOEXEC, 0o666)
            if descriptor >= 0 {
                uncommitted = .anonymous
            } else if [EOPNOTSUPP, EISDIR, EINVAL].contains(errno) {
                // A file system without O_TMPFILE (or an old kernel): a hidden name.
                let temporary = Self.temporaryName(for: target)
                descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
                if descriptor >= 0 { uncommitted = .hidden(temporary) }
            }
            guard descriptor >= 0 else {
                throw .cannotCreateOutput(path: path, reason: Self.errnoText())
            }
            fileDescriptor = descriptor
            finalPath = target
            // A shared lock for as long as the file is written: `hark repair` takes an exclusive
            // one, so it refuses to cut a recording still in progress (advisory; nothing else waits).
            _ = flock(descriptor, LOCK_SH | LOCK_NB)
        }
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

    /// Whether the file is one hark made and has not yet committed or discarded; false for stdout,
    /// a FIFO or a device written in place.
    var isUncommittedFile: Bool { uncommitted != nil }

    /// Gives the file its name: called once recording has started. With `keepsExisting`, the
    /// path may change to the first free numbered name (`destination` says which).
    func commit() throws(RecordingError) {
        guard let pending = uncommitted, let finalPath, case .file(let path) = destination else { return }
        if keepsExisting {
            var candidate = finalPath, counter = 2
            while !link(pending, as: candidate) {
                guard errno == EEXIST else { throw .cannotCreateOutput(path: path, reason: Self.errnoText()) }
                candidate = OutputNaming.numbered(finalPath, counter)
                counter += 1
            }
            if case .hidden(let temporary) = pending { unlink(temporary) }
            if candidate != finalPath { destination = .file(path: OutputNaming.numbered(path, counter - 1)) }
            claimedNewName = candidate
        } else {
            // Replacing what is there in one step: named beside it first, then renamed onto it.
            var temporary = Self.temporaryName(for: finalPath)
            if case .hidden(let name) = pending {
                temporary = name
            } else if !link(pending, as: temporary) {
                guard errno == EEXIST, unlink(temporary) == 0, link(pending, as: temporary) else {
                    throw .cannotCreateOutput(path: path, reason: Self.errnoText())
                }
            }
            guard rename(temporary, finalPath) == 0 else {
                let reason = Self.errnoText()
                unlink(temporary)
                throw .cannotCreateOutput(path: path, reason: reason)
            }
        }
        uncommitted = nil
    }

    /// Removes a file whose recording never started: one never committed, or one that took a new
    /// name. Idempotent. Not for a file that holds a recording.
    func discard() {
        if case .hidden(let temporary) = uncommitted { unlink(temporary) }
        if let claimedNewName { unlink(claimedNewName) }
        uncommitted = nil
        claimedNewName = nil
    }

    /// Links the uncommitted file at `path`, failing with EEXIST if something is there. An
    /// anonymous file is linked through /proc (`linkat` with AT_EMPTY_PATH needs a capability).
    private func link(_ file: Uncommitted, as path: String) -> Bool {
        switch file {
        case .anonymous:
            linkat(AT_FDCWD, "/proc/self/fd/\(fileDescriptor)", AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0
        case .hidden(let temporary):
            Glibc.link(temporary, path) == 0
        }
    }

    /// Flushes the file's data to storage, so a finished recording survives a power cut.
    func synchronize() {
        if fileDescriptor != STDOUT_FILENO { _ = fsync(fileDescriptor) }
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

    private static func errnoText() -> String {
        switch errno {
        case ENOENT: "the directory does not exist"
        case EACCES, EPERM: "permission denied"
        case EROFS: "the file system is read-only"
        default: OutputErrorText.describe(errno: errno)
        }
    }
}
