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

    /// How long the machine has been suspended since it booted, in nanoseconds: CLOCK_BOOTTIME,
    /// which counts a suspend, less this clock, which does not. Adding it to a reading of this
    /// clock gives CLOCK_BOOTTIME at that moment, a clock that neither stops in a suspend nor is
    /// stepped. Allocation-free (two vDSO calls). The corresponding C function is `clock_gettime`.
    public static func nanosecondsSuspended() -> Int {
        var boot = timespec(), monotonic = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        return (Int(boot.tv_sec) - Int(monotonic.tv_sec)) * 1_000_000_000 + Int(boot.tv_nsec) - Int(monotonic.tv_nsec)
    }

    /// The wall clock (CLOCK_REALTIME) less CLOCK_BOOTTIME, in nanoseconds, as it is now: adding it
    /// to a CLOCK_BOOTTIME reading gives that moment's wall-clock time by the system's present
    /// idea of the time (after any step NTP or the administrator made since). The corresponding C
    /// function is `clock_gettime`.
    public static func wallClockLessBootClock() -> Int {
        var realtime = timespec(), boot = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        clock_gettime(CLOCK_BOOTTIME, &boot)
        return (Int(realtime.tv_sec) - Int(boot.tv_sec)) * 1_000_000_000 + Int(realtime.tv_nsec) - Int(boot.tv_nsec)
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
