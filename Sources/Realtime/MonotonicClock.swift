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

    /// The wall clock (CLOCK_REALTIME) less this clock, in nanoseconds, as it is now: adding it to a
    /// reading of this clock gives wall-clock nanoseconds since 1970. It changes when the wall
    /// clock is stepped (NTP, a user's `date -s`) and across a suspend (which this clock does not
    /// count), so a time is converted with the offset of its own moment. Allocation-free (two
    /// vDSO calls). The corresponding C function is `clock_gettime`.
    public static func wallClockOffset() -> Int {
        var realtime = timespec(), monotonic = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        return (Int(realtime.tv_sec) - Int(monotonic.tv_sec)) * 1_000_000_000 + Int(realtime.tv_nsec) - Int(monotonic.tv_nsec)
    }

    /// Sleeps for at least `nanoseconds`, resuming after signals. The corresponding C function is `nanosleep`.
    public static func sleep(nanoseconds: Int) {
        var request = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR {
            request = remaining
        }
    }

    /// Sleeps until the clock reads `deadline` (at once when it has passed), resuming after
    /// signals. An absolute deadline keeps a periodic sleeper on its cadence however long each turn
    /// took. The corresponding C function is `clock_nanosleep` (TIMER_ABSTIME).
    public static func sleep(until deadline: Int) {
        guard deadline > 0 else { return }
        var target = timespec(tv_sec: deadline / 1_000_000_000, tv_nsec: deadline % 1_000_000_000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }
}
