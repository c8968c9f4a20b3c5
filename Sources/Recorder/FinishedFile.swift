import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Which file a descriptor or a name leads to: while a recording runs, its file can be moved, or
/// its name given to another file (a second recorder's), so a name alone is not enough to reach a
/// finished file again. The birth time tells the file from a new one that took the inode number
/// of a deleted one (file systems reuse them at once); where the file system keeps none, the
/// device and inode decide alone.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64
    let birthSeconds: Int64
    let birthNanoseconds: UInt32

    /// The file open on `descriptor`.
    init?(descriptor: Int32) {
        self.init(descriptor, "")
    }

    /// The file `path` leads to now (symbolic links followed).
    init?(path: String) {
        self.init(AT_FDCWD, path)
    }

    /// One statx lookup, so the fields are all of one file.
    private init?(_ descriptor: Int32, _ path: String) {
        var device: UInt64 = 0, inode: UInt64 = 0, seconds: Int64 = -1, nanoseconds: UInt32 = 0
        guard hark_file_identity(descriptor, path, &device, &inode, &seconds, &nanoseconds) == 0 else { return nil }
        (self.device, self.inode, birthSeconds, birthNanoseconds) = (device, inode, seconds, nanoseconds)
    }
}

/// A finished file of a recording, found again when the recording ends to write the last values
/// into its header (`HeaderPatch`), and where it is then.
enum FinishedFile {
    /// How it is reached.
    enum Reach {
        /// A descriptor still open on it (read-write), whatever its name is now.
        case descriptor(Int32)
        /// Its name, and which file that name led to when the file was made (nil when it could
        /// not be looked at): a name that now leads elsewhere is not followed.
        case name(String, FileIdentity?)
    }

    /// Where it is when the recording ends.
    enum Whereabouts: Equatable, Sendable {
        case inPlace
        /// An open file that its name no longer leads to, though a name does: moved. (Where to is
        /// not known: `/proc/self/fd` still gives a file made with O_TMPFILE its first, nameless
        /// dentry, `#inode (deleted)`.)
        case moved
        /// An open file that no name leads to any more: deleted, or another file renamed over
        /// its name. The recording is in no file.
        case nameLost
        /// A closed part whose name leads nowhere: moved away or deleted.
        case gone
        /// A closed part whose name leads to another file, which is left as it is.
        case replaced
        /// A closed part that could not be opened again (the errno).
        case unopenable(Int32)
        /// A closed part that could not be looked at when it was made, so is not known again.
        case unverifiable
    }

    /// A read-write descriptor on the file when `writing` (the caller closes it), nil when it
    /// cannot be had as the file that was written or is not wanted; and where the file is. A
    /// closed part is opened only when there is something to write (a raw part, or a file with
    /// nothing to stamp, is only looked at: opening it for writing would tell programs watching
    /// for finished files that it changed again).
    static func reopen(_ reach: Reach, path: String, writing: Bool) -> (descriptor: Int32?, whereabouts: Whereabouts) {
        switch reach {
        case .descriptor(let open):
            var info = stat()
            let whereabouts: Whereabouts
            if fstat(open, &info) != 0 || (info.st_mode & S_IFMT) != S_IFREG {
                whereabouts = .inPlace
            } else if info.st_nlink == 0 {
                whereabouts = .nameLost
            } else {
                whereabouts = FileIdentity(path: path) == FileIdentity(descriptor: open) ? .inPlace : .moved
            }
            guard writing else { return (nil, whereabouts) }
            let descriptor = dup(open)
            return descriptor >= 0 ? (descriptor, whereabouts) : (nil, .unopenable(errno))
        case .name(let path, let identity):
            guard let identity else { return (nil, .unverifiable) }
            guard let now = FileIdentity(path: path) else { return (nil, errno == ENOENT ? .gone : .unopenable(errno)) }
            guard now == identity else { return (nil, .replaced) }
            guard writing else { return (nil, .inPlace) }
            let descriptor = open(path, O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 else { return (nil, errno == ENOENT ? .gone : .unopenable(errno)) }
            // Looked up again through the descriptor: the name may have changed hands in between.
            guard FileIdentity(descriptor: descriptor) == identity else {
                close(descriptor)
                return (nil, .replaced)
            }
            return (descriptor, .inPlace)
        }
    }
}
