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

    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info, birth: Self.birthTime(descriptor, ""))
    }

    /// The file `path` leads to now (symbolic links followed).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info, birth: Self.birthTime(AT_FDCWD, path))
    }

    private init(_ info: stat, birth: (seconds: Int64, nanoseconds: UInt32)) {
        (device, inode) = (UInt64(info.st_dev), UInt64(info.st_ino))
        (birthSeconds, birthNanoseconds) = birth
    }

    /// The birth time statx gives, or (-1, 0) where there is none.
    private static func birthTime(_ descriptor: Int32, _ path: String) -> (seconds: Int64, nanoseconds: UInt32) {
        var seconds: Int64 = -1, nanoseconds: UInt32 = 0
        return hark_birth_time(descriptor, path, &seconds, &nanoseconds) == 0 ? (seconds, nanoseconds) : (-1, 0)
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
    }

    /// A read-write descriptor on the file (the caller closes it), nil when it cannot be had as
    /// the file that was written; and where the file is.
    static func reopen(_ reach: Reach, path: String) -> (descriptor: Int32?, whereabouts: Whereabouts) {
        switch reach {
        case .descriptor(let open):
            let descriptor = dup(open)
            guard descriptor >= 0 else { return (nil, .unopenable(errno)) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return (descriptor, .inPlace) }
            if info.st_nlink == 0 { return (descriptor, .nameLost) }
            return (descriptor, FileIdentity(path: path) == FileIdentity(descriptor: descriptor) ? .inPlace : .moved)
        case .name(let path, let identity):
            let descriptor = open(path, O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 else { return (nil, errno == ENOENT ? .gone : .unopenable(errno)) }
            guard let identity, FileIdentity(descriptor: descriptor) == identity else {
                close(descriptor)
                return (nil, .replaced)
            }
            return (descriptor, .inPlace)
        }
    }
}
