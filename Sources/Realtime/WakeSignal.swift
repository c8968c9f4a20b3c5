#if canImport(Glibc)
import Glibc
#endif

/// A counting semaphore one thread posts to wake another, for "data is ready" hand-offs.
///
/// `signal()` is real-time safe: glibc's `sem_post` is lock-free and enters the kernel only when
/// a thread is waiting (it is async-signal-safe too). `wait(timeout:)` blocks, so it belongs on
/// the side that may sleep (the encoder thread), never on the capture thread.
public final class WakeSignal: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    public init() {
        semaphore = .allocate(capacity: 1)
        let result = sem_init(semaphore, 0, 0)
        precondition(result == 0, "sem_init failed: errno \(errno)")
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Wakes one waiter, or the next one to wait. The corresponding C function is `sem_post`.
    public func signal() {
        _ = sem_post(semaphore)
    }

    /// Sleeps until signalled or until `timeoutNanoseconds` pass; returns whether it was signalled.
    /// Retries after EINTR. The corresponding C function is `sem_timedwait`, whose deadline is on the
    /// realtime clock (glibc's monotonic `sem_clockwait` is a GNU extension Swift does not see); a
    /// clock step only lengthens or shortens one wait, which callers treat as a poll interval anyway.
    @discardableResult
    public func wait(timeoutNanoseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let total = Int(deadline.tv_nsec) + timeoutNanoseconds
        deadline.tv_sec += total / 1_000_000_000
        deadline.tv_nsec = total % 1_000_000_000
        while true {
            if sem_timedwait(semaphore, &deadline) == 0 { return true }
            if errno != EINTR { return false }
        }
    }
}
