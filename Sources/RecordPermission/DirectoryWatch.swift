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

    var isAvailable: Bool { descriptor >= 0 }

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
            while inotify_add_watch(descriptor, path, Self.events) < 0, errno == ENOENT || errno == ENOTDIR {
                guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else {
                    path = "/"
                    _ = inotify_add_watch(descriptor, path, Self.events)
                    break
                }
                path = String(path[..<slash])
            }
        }
    }
}
