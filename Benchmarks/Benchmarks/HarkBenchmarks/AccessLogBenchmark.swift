import Benchmark
import RecordPermission
#if canImport(Glibc)
import Glibc
#endif

/// What every `hark record` does before its first audio: looks through the access log for
/// recordings left unfinished (`AccessLog.unfinishedRecordings()`), here on a log at its largest:
/// written through `AccessLog` (a start line and an entry per recording) until both files hold
/// about 1 MB, which is where it rotates. Not on the hot path, so no threshold; its time is a
/// start-up cost that grows with the log.
private final class FullLog: @unchecked Sendable {
    let directory: String
    let log: AccessLog

    init() throws {
        directory = try makeBenchmarkDirectory("hark-bench-log")
        log = AccessLog(locations: benchmarkLocations(in: directory))
        var index = 0
        while Self.size(of: log.path + ".1") == nil || Self.size(of: log.path)! < log.maxBytes - 1_000 {
            index += 1
            let output = "/home/someone/Recordings/talk-\(index).flac"
            let start = RecordingStart(outputs: [output], device: "pulse")
            try log.appendStart(start)
            var entry = AccessLogEntry(start: start.start, end: .now(), app: "dev.hark.cli", device: "pulse",
                                       format: "S16_LE, 2 ch, 48000 Hz, flac", output: output, frames: 2_880_000,
                                       consent: .stored, ended: "duration", framesDropped: 0, overruns: 0, framesLostToOverruns: 0,
                                       recordingID: start.id)
            entry.loudness = ["loudnessLUFS": -23.1, "loudnessRangeLU": 6.2, "truePeakDBTP": -1.4, "samplePeakDBFS": -1.6]
            try log.append(entry)
        }
    }

    func remove() { removeBenchmarkDirectory(directory) }

    private static func size(of path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }
}

func registerAccessLogBenchmark() {
    let state = SetupState<FullLog>()
    Benchmark("Start_unfinished_recordings_check_full_access_log",
              configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal], warmupIterations: 1,
                                   maxDuration: .seconds(3), maxIterations: 50)) { benchmark in
        for _ in benchmark.scaledIterations {
            let unfinished = state.value!.log.unfinishedRecordings()
            expectInBenchmark(unfinished.isEmpty, "every recording in the log ended")
            blackHole(unfinished)
        }
    } setup: {
        if state.value == nil { state.value = try FullLog() }
    } teardown: {
        state.value?.remove()
        state.value = nil
    }
}
