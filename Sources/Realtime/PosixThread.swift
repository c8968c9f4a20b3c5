#if canImport(Glibc)
import Glibc
#endif

/// A plain OS thread (pthread), for work that must not run on Swift's concurrency runtime:
/// the capture loop and the encoder loop.
///
/// Owns the thread: `join()` waits for it, and so does dropping the value (as C++'s `jthread`
/// does), so a thread never outlives the state its body borrows.
public struct PosixThread: ~Copyable {
    private let handle: pthread_t
    /// How the thread is scheduled, as the system granted it.
    public let scheduling: ThreadScheduling

    /// Starts `body` on a new thread.
    ///
    /// With `realtimePriority`, the thread is first created with `SCHED_FIFO` at that priority;
    /// when the system refuses (no `CAP_SYS_NICE`, no RLIMIT_RTPRIO), it quietly starts with normal
    /// scheduling instead, and `scheduling` says which one ran. Not real-time safe (allocates the
    /// context box). The corresponding C function is `pthread_create`.
    public init(name: String, realtimePriority: Int32? = nil, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
        let box = Unmanaged.passRetained(ThreadBody(name: name, body: body))
        var started: (pthread_t, ThreadScheduling)?
        if let priority = realtimePriority {
            let clamped = min(max(priority, sched_get_priority_min(SCHED_FIFO)), sched_get_priority_max(SCHED_FIFO))
            if let thread = Self.spawn(box, fifoPriority: clamped) {
                started = (thread, .realtimeFIFO(priority: clamped))
            }
        }
        if started == nil {
            guard let thread = Self.spawn(box, fifoPriority: nil) else {
                box.release()
                throw ThreadStartError(name: name)
            }
            started = (thread, realtimePriority == nil ? .normal : .normalAfterRealtimeRefused)
        }
        handle = started!.0
        scheduling = started!.1
    }

    /// Waits for the thread to finish. The corresponding C function is `pthread_join`.
    public consuming func join() {
        let result = pthread_join(handle, nil)
        precondition(result == 0, "pthread_join failed: \(result)")
        discard self
    }

    deinit {
        pthread_join(handle, nil)
    }

    private static func spawn(_ box: Unmanaged<ThreadBody>, fifoPriority: Int32?) -> pthread_t? {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let priority = fifoPriority {
            var parameters = sched_param()
            parameters.sched_priority = priority
            pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
            pthread_attr_setschedpolicy(&attributes, SCHED_FIFO)
            pthread_attr_setschedparam(&attributes, &parameters)
        }
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { context in
            let box = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
            box.run()
            return nil
        }, box.toOpaque())
        return result == 0 ? thread : nil
    }
}

/// How a `PosixThread` ended up scheduled.
public enum ThreadScheduling: Sendable, Equatable, CustomStringConvertible {
    /// `SCHED_FIFO` at this priority.
    case realtimeFIFO(priority: Int32)
    /// Real-time scheduling was asked for and refused; the thread runs with normal priority.
    case normalAfterRealtimeRefused
    case normal

    public var description: String {
        switch self {
        case .realtimeFIFO(let priority): "real-time (SCHED_FIFO, priority \(priority))"
        case .normalAfterRealtimeRefused: "normal (real-time scheduling not permitted)"
        case .normal: "normal"
        }
    }
}

public struct ThreadStartError: Error, CustomStringConvertible {
    public let name: String
    public var description: String { "cannot start the \(name) thread" }
}

private final class ThreadBody {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
    func run() {
        setName()
        body()
    }

    /// Names the calling thread, so top, ps -L, powertop and per-thread measurements show it (at
    /// most 15 bytes). Through /proc/thread-self/comm: glibc's `pthread_setname_np` (and `prctl`,
    /// which is variadic) are not visible to Swift. Before the body runs, so off any real-time path.
    private func setName() {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }
}
