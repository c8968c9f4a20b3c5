import AudioFormat
import Foundation
import Testing

/// `--max-delay` on a pipe: a paced recording (real time, through a private PulseAudio) streams
/// Ogg Opus to a pipe this test reads itself, noting when each page arrives.
@Suite struct OpusPipeDelayTests {
    /// A page as it came out of the pipe: its granule position and when its last byte arrived.
    struct Arrival {
        let granulePosition: Int64
        let seconds: Double
    }

    /// Runs hark with stdout on a pipe and reads it until EOF, timing each complete Ogg page.
    /// Returns the pages' arrivals, hark's exit status, and its stderr.
    static func streamPages(_ arguments: [String], rig: ALSATestRig, timeout: Double = 30) throws
        -> (arrivals: [Arrival], bytes: [UInt8], status: Int32, standardError: String) {
        let process = Process()
        process.executableURL = harkBinary
        process.arguments = arguments
        process.environment = rig.environment
        let output = Pipe()
        let errorFile = URL(fileURLWithPath: rig.path("stderr-pipe"))
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()   // Foundation closes our copy of the write end, so hark's exit is EOF here

        let descriptor = output.fileHandleForReading.fileDescriptor
        var bytes: [UInt8] = []
        var parsed = 0
        var arrivals: [Arrival] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            let now = monotonicSeconds()
            bytes += chunk.prefix(count)
            let (pages, end) = OggPage.completePages(in: bytes, from: parsed)
            arrivals += pages.map { Arrival(granulePosition: $0.granulePosition, seconds: now) }
            parsed = end
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let standardError = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        return (arrivals, bytes, process.terminationStatus, standardError)
    }

    /// In steady state (after the first audio page) a page arrives at most `--max-delay` plus a
    /// capture period after the first audio it holds was captured, measured on the audio's own
    /// clock: page i's first sample is page i−1's granule, and the first audio page's arrival is
    /// the time origin, so
    ///     lateness(i) = (arrival(i) − arrival(1)) − (granule(i−1) − granule(1)) / 48 kHz
    ///                 ≤ max-delay (200 ms) + one period (125 ms) + 250 ms for scheduling noise.
    /// (A bound on the page's last sample, granule(i), would be looser by the page's own length.)
    /// Lateness is about 200 ms plus the difference of two pages' waits for their capture period:
    /// 150–330 ms per page. Worst measured on a 2-core machine: 326–330 ms in 6 runs, the same with
    /// `stress-ng --cpu 2` loading both cores (the capture thread runs SCHED_FIFO). The printed
    /// line gives each run's figures. Recorded with `--max-delay 500` instead, the worst is 549 ms,
    /// so a muxing delay about 350 ms longer than asked for fails.
    ///
    /// The lateness is measured by this test's own reader thread, so a loaded machine (or a
    /// sanitizer, which slows hark and this reader alike) can make a page or two look late that
    /// hark sent on time. The systematic promise is asserted on the median and the 80th percentile
    /// (≤ the bound: a muxing delay that is too long shifts every page, not a few); the single
    /// worst page gets another 250 ms of scheduling slack. Both slacks are scaled by
    /// `TestLoad.slowdown`: under a sanitizer the bound is looser, and the plain run keeps it sharp.
    @Test func pagesReachAPipeReaderWithinTheMaxDelay() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let rig = try ALSATestRig(input: TestSignal(format: format, frames: 6 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        let maxDelay = 0.200
        let period = 0.125
        let stream = try Self.streamPages(["record", "-q", "-D", "pacedcap", "-d", "4", "--format", "opus",
                                           "--max-delay", "200", "-o", "-"], rig: rig)
        #expect(stream.status == 0, "\(stream.standardError)")
        let path = rig.path("piped.opus")
        try Data(stream.bytes).write(to: URL(fileURLWithPath: path))
        let info = try OpusTools.info(path)
        #expect(info.isClean, "\(info.text)")

        #expect(try OpusTools.decode(path).samples.count / 2 == 4 * 48_000)

        #expect(stream.arrivals.prefix(2).allSatisfy { $0.granulePosition == 0 }, "OpusHead and OpusTags first")
        let audio = stream.arrivals.dropFirst(2)
        try #require(audio.count >= 15, "4 s in pages of 200 ms: \(audio.count) audio pages")
        let first = audio.first!
        var latenesses: [Double] = []
        var report: [String] = []
        for (previous, page) in zip(audio, audio.dropFirst()) {
            let audioTime = Double(previous.granulePosition - first.granulePosition) / 48_000
            let lateness = (page.seconds - first.seconds) - audioTime
            latenesses.append(lateness)
            report.append(String(format: "%.0f", lateness * 1000))
        }
        let sorted = latenesses.sorted()
        let worst = sorted.last!
        let median = sorted[(sorted.count - 1) / 2]
        let percentile80 = sorted[Int((Double(sorted.count - 1) * 0.8).rounded(.up))]
        let bound = maxDelay + period + 0.250 * TestLoad.slowdown
        let worstBound = bound + 0.250 * TestLoad.slowdown
        let firstPageAfterHeaders = first.seconds - stream.arrivals[0].seconds
        func ms(_ seconds: Double) -> String { String(format: "%.0f", seconds * 1000) }
        print("OpusPipeDelayTests: worst lateness \(ms(worst)) ms (bound \(ms(worstBound)) ms), median \(ms(median)) ms, "
              + "80th percentile \(ms(percentile80)) ms (bound \(ms(bound)) ms); "
              + "first audio page \(ms(firstPageAfterHeaders)) ms after the headers; per page: \(report.joined(separator: " "))")
        #expect(median <= bound, "median lateness \(ms(median)) ms; per page in ms: \(report)")
        #expect(percentile80 <= bound, "80th percentile lateness \(ms(percentile80)) ms; per page in ms: \(report)")
        #expect(worst <= worstBound, "worst lateness \(ms(worst)) ms; per page in ms: \(report)")
        // And not early: pages held back and sent together (a buffered stdout) would all arrive
        // with the first, their lateness as negative as their audio is far from it (a median of
        // -1.9 s over 4 s). Steady pages are about as late as the first one.
        let earliest = -0.5 * TestLoad.slowdown
        #expect(median >= earliest, "median lateness \(ms(median)) ms: pages came in bursts; per page in ms: \(report)")
    }
}

/// Seconds on the monotonic clock.
private func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
