import Foundation
import Testing

/// The first sample's time when the clocks move under a recording: a laptop suspended
/// mid-recording (the monotonic clock, which the device's timestamps use, stops; the wall clock
/// and CLOCK_BOOTTIME go on), and the wall clock corrected mid-recording (NTP setting the clock of
/// a machine that started recording before it was set).
///
/// Both are made in hark's process alone, by a preloaded library that adds the seconds a file
/// says to every wall-clock reading (`clock_gettime`'s realtime clocks, `time`, `gettimeofday`) and
/// to CLOCK_BOOTTIME: the machine's clocks are not the test's to change.
@Suite struct WallClockStepTests {
    /// The C compiler that builds the clock-stepping library (the Swift toolchain brings clang).
    static let compiler = ["cc", "clang"].first { findOnPath($0) != nil }

    /// Adds the whole seconds written in `$HARK_TEST_CLOCK_STEP_FILE` ("REALTIME BOOTTIME"; none
    /// while it is absent) to the wall clock and to CLOCK_BOOTTIME, read afresh at each call so the
    /// test can step them mid-recording.
    static let shim = #"""
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <stdlib.h>
        #include <sys/time.h>
        #include <time.h>
        #include <unistd.h>
        static long step_seconds(int field) {
            const char *path = getenv("HARK_TEST_CLOCK_STEP_FILE");
            int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
            if (fd < 0) return 0;
            char text[64];
            ssize_t length = read(fd, text, sizeof text - 1);
            close(fd);
            if (length <= 0) return 0;
            text[length] = 0;
            char *next = text;
            long value = strtol(next, &next, 10);
            return field == 0 ? value : strtol(next, NULL, 10);
        }
        int clock_gettime(clockid_t clock, struct timespec *time) {
            static int (*real)(clockid_t, struct timespec *);
            if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
            int result = real(clock, time);
            if (result != 0) return result;
            if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE) time->tv_sec += step_seconds(0);
            if (clock == CLOCK_BOOTTIME) time->tv_sec += step_seconds(1);
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

    /// Records 6 s from the paced virtual microphone with hark's clocks stepped by `step`
    /// ("REALTIME BOOTTIME" seconds) once audio is in the file; returns the first sample's time
    /// (from the tag, checked against the summary and the log), and when the test launched and
    /// saw hark end, by its own clock.
    static func firstSampleTime(steppingClocksBy step: String) throws -> (first: Date, launched: Date, ended: Date) {
        let compiler = try #require(Self.compiler)
        let rig = try ALSATestRig(input: TestSignal(format: CaptureClockTests.format, frames: 9 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        let source = rig.path("step-clock.c"), library = rig.path("step-clock.so"), stepFile = rig.path("clock-step")
        try shim.write(toFile: source, atomically: true, encoding: .utf8)
        let built = try runTool(compiler, ["-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"])
        try #require(built.status == 0, "\(built.standardError)")
        // Only hark gets the library: the rig's sound server started without it.
        rig.extraEnvironment["LD_PRELOAD"] = library
        rig.extraEnvironment["HARK_TEST_CLOCK_STEP_FILE"] = stepFile

        let output = rig.path("stepped.flac")
        let launched = Date()
        let recording = try startHark(["record", "-v", "-D", "pacedcap", "-d", "6", "-o", output], rig: rig)
        // Audio in the file means its first frames were captured, and timed, before the step.
        try OutputGrowth.waitForFLACAudio(output, seconds: 0.5)
        try step.write(toFile: stepFile + ".new", atomically: false, encoding: .utf8)
        #expect(rename(stepFile + ".new", stepFile) == 0)
        let result = recording.wait(timeout: 60)
        let ended = Date()
        #expect(result.status == 0, "\(result.standardError)")

        let tag = try #require(try FLACTools.tags(output).first { $0.hasPrefix("HARK_FIRST_SAMPLE_TIME=") })
        let stamp = String(tag.dropFirst(23))
        let first = try #require(preciseTime(stamp), "\(tag)")
        // The summary's line and the access log say the same time.
        #expect(result.standardError.contains("first sample captured at \(stamp)"), "\(result.standardError)")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        #expect(log.contains("\"firstSample\":\"\(stamp)\""), "\(log)")
        return (Date(timeIntervalSince1970: first), launched, ended)
    }

    /// A suspend of an hour: the wall clock and CLOCK_BOOTTIME jump on, the monotonic clock does
    /// not. The first sample was captured when it was, not an hour later (it was: the monotonic
    /// stamp was converted with the clocks' offset at the end).
    @Test(.enabled(if: compiler != nil, "needs a C compiler (cc or clang) to build the clock-stepping library"))
    func aSuspendMidRecordingLeavesTheFirstSampleTimeWhereItWas() throws {
        let (first, launched, ended) = try Self.firstSampleTime(steppingClocksBy: "3600 3600")
        #expect(first >= launched.addingTimeInterval(-0.05) && first <= ended.addingTimeInterval(-5.9),
                "first sample \(first): launched \(launched), ended \(ended)")
    }

    /// The wall clock set back an hour (NTP correcting a clock that was an hour fast): the first
    /// sample's time is told by the corrected clock, as every later time is.
    @Test(.enabled(if: compiler != nil, "needs a C compiler (cc or clang) to build the clock-stepping library"))
    func aClockCorrectedMidRecordingCorrectsTheFirstSampleTime() throws {
        let (first, launched, ended) = try Self.firstSampleTime(steppingClocksBy: "-3600 0")
        #expect(first >= launched.addingTimeInterval(-3600.05) && first <= ended.addingTimeInterval(-3605.9),
                "first sample \(first): launched \(launched), ended \(ended), an hour earlier by the corrected clock")
    }
}
