// swift-tools-version: 6.1
// hark's benchmark suite: its own package, so the main package's `swift build` and `swift test`
// never build package-benchmark. Run from this folder: `swift package benchmark`.
import PackageDescription

let package = Package(
    name: "hark-benchmarks",
    products: [
        .executable(name: "latency-probe", targets: ["latency-probe"]),
    ],
    dependencies: [
        .package(name: "hark", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Tools for Benchmarks/compare (the signal generator is the main package's hark-signal sample).
        .executableTarget(
            name: "latency-probe", dependencies: [.product(name: "Realtime", package: "hark")], path: "Tools/latency-probe"
        ),
        // The C11 SPSC ring the Swift ring is measured against.
        .target(name: "CSPSCRing", path: "Sources/CSPSCRing"),
        .executableTarget(
            name: "HarkBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "RingBuffer", package: "hark"),
                .product(name: "Encoding", package: "hark"),
                .product(name: "Loudness", package: "hark"),
                .product(name: "AudioFormat", package: "hark"),
                .product(name: "Recorder", package: "hark"),
                .product(name: "Capture", package: "hark"),
                .product(name: "RecordPermission", package: "hark"),
                .product(name: "Realtime", package: "hark"),
                .product(name: "SignalGenerator", package: "hark"),
                "CSPSCRing",
            ],
            path: "Benchmarks/HarkBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
