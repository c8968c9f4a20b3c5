#if canImport(Glibc)
import Glibc
#endif

/// An inotify descriptor that becomes readable when a file appears, goes, is replaced, written or
/// changes its mode in any of some directories: what lets the revocation watch sleep until the
/// permission store, the revocation stamps or the policy change, instead of looking twice a
/// second (#16).
///
/// A directory that does not exist yet (no `/etc/hark` on most machines) is watched through its
/// nearest existing ancestor, so its creation is seen; each `drain()` adds the watches again, and
/// a directory created meanwhile is then watched itself. Reading files in the directories (as the
/// revocation watch does) raises no event: opens, reads and closes without a write are not
/// watched, or the watch would wake itself.
final class DirectoryWatch {
    /// The inotify descriptor, or -1 where inotify cannot be used (the caller then polls).
    let descriptor: Int32
    private let directories: [String]
    private static let events = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_ATTRIB
                                       | IN_DELETE_SELF | IN_MOVE_SELF)

    init(directories: [String]) {
        self.directories = directories
        #if DEBUG
        // Debug builds only: how the tests run the polling fallback, since inotify is always there
        // on the rig (`WakeUpTests.withoutInotifyTheSessionPollsAndARevocationStillStopsItWithinASecond`).
        if getenv("HARK_DEBUG_NO_INOTIFY") != nil {
            descriptor = -1
            return
        }
        #endif
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if descriptor >= 0 { addWatches() }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether every directory (or its nearest existing ancestor) is watched. False from the
    /// first watch that could not be added for another reason than a missing directory: the
    /// user's inotify watches used up (ENOSPC: an IDE takes thousands), a path that cannot be
    /// followed. A change there would raise no event, so the caller must poll (without this, a
    /// recording with no status line never looked again, and a revocation went unseen).
    private(set) var isComplete = true

    /// Whether changes are reported: false where the caller must poll instead.
    var isAvailable: Bool { descriptor >= 0 && isComplete }

    /// Takes every pending event, and watches again (directories may have been created or
    /// replaced). Returns whether there was any.
    @discardableResult
    func drain() -> Bool {
        guard descriptor >= 0 else { return false }
        var any = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(descriptor, &buffer, buffer.count) > 0 { any = true }
        if any { addWatches() }
        return any
    }

    private func addWatches() {
        for directory in directories {
            var path = directory
            // The nearest ancestor that exists; watching it again is harmless (same watch).
            var watch = addWatch(path)
            while watch < 0, errno == ENOENT || errno == ENOTDIR, path != "/" {
                let slash = path.lastIndex(of: "/")
                path = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "/"
                watch = addWatch(path)
            }
            if watch < 0 { isComplete = false }
        }
    }

    /// The corresponding C function is `inotify_add_watch`.
    private func addWatch(_ path: String) -> Int32 {
        #if DEBUG
        // Debug builds only: how the tests reach the user's watch limit, which is the system's
        // (lowering it would fail every other recorder running meanwhile).
        if getenv("HARK_DEBUG_NO_INOTIFY_WATCHES_LEFT") != nil {
            errno = ENOSPC
            return -1
        }
        #endif
        return inotify_add_watch(descriptor, path, Self.events)
    }
}
