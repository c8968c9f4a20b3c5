import Benchmark

/// hark's hot path, measured: the ring against a C11 yardstick, sample conversion, the encoders'
/// steady state, and a whole recording session.
///
/// Allocation thresholds: the hot-path benchmarks (ring, conversion, encode steps) are registered
/// with `HotPath.configuration`, which tolerates no malloc at all; `Thresholds/` holds their
/// checked-in values (0), and `swift package benchmark thresholds check --metric mallocCountTotal`
/// fails on any regression. Timings are reported but never checked: machines here are noisy.
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
    registerSessionBenchmark()
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
