#if canImport(Glibc)
import Glibc
#endif

/// The monotonic clock, read without allocation (`clock_gettime` is a vDSO call here), so it is
/// usable on the capture thread.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point. The corresponding C function is `clock_gettime`.
    public static func nanoseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec)
    }

    /// Sleeps for at least `nanoseconds`, resuming after signals. The corresponding C function is `nanosleep`.
    public static func sleep(nanoseconds: Int) {
        var request = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR {
            request = remaining
        }
    }
}
