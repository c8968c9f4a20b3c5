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
/// A regular file is written under a hidden temporary name in the same directory and renamed onto
/// the requested path only once capture has started (`commit()`), so an existing file survives a
/// recording that never started, and a failed start removes its temporary file (`discard()`).
/// Standard output, devices and FIFOs are written in place. A path that is a symbolic link is
/// written through, as `arecord` or `flac -o` write: the new file goes where the link points and
/// the link stays (renamed onto the link itself, the recording would replace it).
final class OutputTarget {
    let destination: OutputDestination
    let fileDescriptor: Int32
    private var temporaryPath: String?
    /// Where the file is renamed to: the requested path with its symbolic links followed.
    private var finalPath: String?

    /// Creates the output. Throws `.cannotCreateOutput` before any device is touched.
    init(_ destination: OutputDestination) throws(RecordingError) {
        self.destination = destination
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
            let temporary = Self.temporaryName(for: target)
            // Read-write: after a failed write, salvaging the file reads its header back (pread).
            let descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else {
                throw .cannotCreateOutput(path: path, reason: Self.errnoText())
            }
            fileDescriptor = descriptor
            temporaryPath = temporary
            finalPath = target
            // A shared lock for as long as the file is written: `hark repair` takes an exclusive
            // one, so it refuses to cut a recording still in progress (advisory; nothing else waits).
            _ = flock(descriptor, LOCK_SH | LOCK_NB)
        }
    }

    deinit {
        if let temporaryPath { unlink(temporaryPath) }
        if fileDescriptor != STDOUT_FILENO { close(fileDescriptor) }
    }

    /// Whether the output is a regular file (stdout redirected to one included), which nobody
    /// reads while it is written; false for a pipe, a terminal, a socket or a device.
    var isRegularFile: Bool {
        var info = stat()
        return fstat(fileDescriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Whether the file is still under its hidden temporary name (a file hark created, not yet
    /// committed or discarded); false for stdout, a FIFO or a device written in place.
    var hasTemporaryName: Bool { temporaryPath != nil }

    /// Moves the file to its requested name: called once recording has started.
    func commit() throws(RecordingError) {
        guard let temporary = temporaryPath, let finalPath, case .file(let path) = destination else { return }
        guard rename(temporary, finalPath) == 0 else {
            throw .cannotCreateOutput(path: path, reason: Self.errnoText())
        }
        temporaryPath = nil
    }

    /// Removes a file that was never committed. Idempotent.
    func discard() {
        if let temporaryPath {
            unlink(temporaryPath)
            self.temporaryPath = nil
        }
    }

    /// Flushes the file's data to storage, so a finished recording survives a power cut.
    func synchronize() {
        if fileDescriptor != STDOUT_FILENO { _ = fsync(fileDescriptor) }
    }

    private static func temporaryName(for path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return "\(directory).\(name).hark-\(getpid())"
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
