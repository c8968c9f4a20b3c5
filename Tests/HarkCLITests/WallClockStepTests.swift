import Foundation
import Testing

/// The wall clock stepped while hark records (NTP correcting a clock, `date -s`, or, the same to
/// the monotonic clock, a laptop suspended mid-recording): the first sample's time stays the time
/// it was captured at.
///
/// The step is made in hark's process alone, by a preloaded library that adds the seconds a file
/// says to every wall-clock reading (`clock_gettime`'s realtime clocks, `time`, `gettimeofday`):
/// the machine's clock is not the test's to change.
@Suite struct WallClockStepTests {
    /// Adds the whole seconds written in `$HARK_TEST_CLOCK_STEP_FILE` (none while it is absent) to
    /// the wall clock, read afresh at each call so the test can step it mid-recording.
    static let shim = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <stdlib.h>
        #include <sys/time.h>
        #include <time.h>
        #include <unistd.h>
        static long step_seconds(void) {
            const char *path = getenv("HARK_TEST_CLOCK_STEP_FILE");
            int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
            if (fd < 0) return 0;
            char text[32];
            ssize_t length = read(fd, text, sizeof text - 1);
            close(fd);
            if (length <= 0) return 0;
            text[length] = 0;
            return atol(text);
        }
        int clock_gettime(clockid_t clock, struct timespec *time) {
            static int (*real)(clockid_t, struct timespec *);
            if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
            int result = real(clock, time);
            if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) time->tv_sec += step_seconds();
            return result;
        }
        int gettimeofday(struct timeval *time, void *zone) {
            (void)zone;
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            if (time) { time->tv_sec = now.tv_sec; time->tv_usec = now.tv_nsec / 1000; }
            return 0;
        }
        time_t time(time_t *out) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            if (out) *out = now.tv_sec;
            return now.tv_sec;
        }
        """#

    @Test func aClockSteppedBackAnHourMidRecordingLeavesTheFirstSampleTimeWhereItWas() throws {
        guard let compiler = ["cc", "clang"].first(where: { findOnPath($0) != nil }) else {
            print("WallClockStepTests: skipped: no C compiler (cc or clang) to build the clock-stepping library")
            return
        }
        let format = CaptureClockTests.format
        let rig = try ALSATestRig(input: TestSignal(format: format, frames: 9 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        let source = rig.path("step-clock.c"), library = rig.path("step-clock.so"), step = rig.path("clock-step")
        try Self.shim.write(toFile: source, atomically: true, encoding: .utf8)
        let built = try runTool(compiler, ["-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"])
        try #require(built.status == 0, "\(built.standardError)")
        // Only hark gets the library: the rig's sound server started without it.
        rig.extraEnvironment["LD_PRELOAD"] = library
        rig.extraEnvironment["HARK_TEST_CLOCK_STEP_FILE"] = step

        let output = rig.path("stepped.flac")
        let launched = Date()
        let recording = try startHark(["record", "-v", "-D", "pacedcap", "-d", "6", "-o", output], rig: rig)
        // Audio in the file means its first frames were captured, and timed, before the step.
        try OutputGrowth.waitForFLACAudio(output, seconds: 0.5)
        try "-3600".write(toFile: step + ".new", atomically: false, encoding: .utf8)
        #expect(rename(step + ".new", step) == 0)
        let result = recording.wait(timeout: 60)
        let ended = Date()
        #expect(result.status == 0, "\(result.standardError)")

        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let tag = try #require(try FLACTools.tags(output).first { $0.hasPrefix("HARK_FIRST_SAMPLE_TIME=") })
        let first = try #require(formatter.date(from: String(tag.dropFirst(23))), "\(tag)")
        // When it was captured by the clock as it was then: after the launch, 6 s of audio before
        // the end. Converted with the clock as it is at the end, it would be an hour earlier.
        #expect(first >= launched.addingTimeInterval(-0.05) && first <= ended.addingTimeInterval(-5.9),
                "\(tag): launched \(launched), ended \(ended)")
        // The summary's line and the access log say the same time.
        let stamp = String(tag.dropFirst(23))
        #expect(result.standardError.contains("first sample captured at \(stamp)"), "\(result.standardError)")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        #expect(log.contains("\"firstSample\":\"\(stamp)\""), "\(log)")
    }
}
