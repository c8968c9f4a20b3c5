import Benchmark

/// hark's hot path, measured: the ring against a C11 yardstick, sample conversion, the encoders'
/// steady state, the loudness meter, and a whole recording session; and one cost of every start,
/// the access log's check for unfinished recordings.
///
/// Names use no spaces or slashes: package-benchmark 1.38.1 writes static threshold files with
/// those replaced by underscores but looks them up by the raw name, so any other name never matches.
///
/// Each iteration moves 1 MiB (ring), converts or encodes 1 s of 48 kHz stereo, or records 60 s.
///
/// Allocation thresholds: the hot-path benchmarks (ring, conversion, encode steps) are registered
/// with `HotPath.configuration`, which tolerates no malloc at all; `Thresholds/` holds their
/// checked-in values (0), and `swift package benchmark thresholds check --metric mallocCountTotal`
/// fails on any regression. Timings are reported but never checked: machines here are noisy.
/// Measure mallocs on their own (`--metric mallocCountTotal`): when the CPU-time metric is sampled
/// too, package-benchmark's own sampling shows up as 16 mallocs per iteration in every benchmark,
/// an empty one included.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .cpuTotal, .mallocCountTotal],
        warmupIterations: 2,
        maxDuration: .seconds(2),
        maxIterations: 200
    )
    registerRingBenchmarks()
    registerConversionBenchmarks()
    registerEncoderBenchmarks()
    registerLoudnessBenchmarks()
    registerSessionBenchmark()
    registerSoundServerSessionBenchmark()
    registerAccessLogBenchmark()
}

enum HotPath {
    /// For code that must not allocate: any malloc in an iteration is a regression.
    static var configuration: Benchmark.Configuration {
        var configuration = Benchmark.defaultConfiguration
        configuration.thresholds = [.mallocCountTotal: BenchmarkThresholds(absolute: [.p0: 0, .p50: 0, .p90: 0, .p100: 0])]
        return configuration
    }
}

/// Mutable state a benchmark builds in its setup hook and uses in its iterations. Benchmarks run
/// one at a time, so unsynchronized access is fine.
final class SetupState<Value>: @unchecked Sendable {
    var value: Value?
}
