// swift-tools-version: 6.0
// hark: a command-line audio recorder for Linux. See docs/architecture.md for the architecture.
import PackageDescription

// The loops compiled for x86-64 processors with AVX2 and FMA (LoudnessKernelChoice picks them at
// run time): only where the package is built on x86-64, as those flags mean nothing elsewhere.
#if arch(x86_64)
let loudnessKernelsAVX2: [Target.Dependency] = ["LoudnessKernelsAVX2"]
let loudnessKernelsAVX2Target: [Target] = [
    .target(name: "LoudnessKernelsAVX2", dependencies: ["LoudnessKernels"],
            swiftSettings: [.unsafeFlags(["-Xcc", "-mavx2", "-Xcc", "-mfma"]),
                            .unsafeFlags(["-O"], .when(configuration: .debug))]),
]
#else
let loudnessKernelsAVX2: [Target.Dependency] = []
let loudnessKernelsAVX2Target: [Target] = []
#endif

let package = Package(
    name: "hark",
    products: [
        .executable(name: "hark", targets: ["hark"]),
        .executable(name: "hark-signal", targets: ["hark-signal"]),
        .executable(name: "hark-privacy-switch", targets: ["hark-privacy-switch"]),
        .library(name: "AudioFormat", targets: ["AudioFormat"]),
        .library(name: "RingBuffer", targets: ["RingBuffer"]),
        .library(name: "Realtime", targets: ["Realtime"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "Encoding", targets: ["Encoding"]),
        .library(name: "Recorder", targets: ["Recorder"]),
        .library(name: "RecordPermission", targets: ["RecordPermission"]),
        .library(name: "SignalGenerator", targets: ["SignalGenerator"]),
        .library(name: "SoundServer", targets: ["SoundServer"]),
        .library(name: "Repair", targets: ["Repair"]),
        .library(name: "Loudness", targets: ["Loudness"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // C libraries, reached only through these system-library targets and their shim headers.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),
        .systemLibrary(name: "COpusEnc", pkgConfig: "libopusenc", providers: [.apt(["libopusenc-dev", "libopus-dev"])]),
        // The tests' reference loudness meter (LoudnessTests); hark measures with its own.
        .systemLibrary(name: "CEBUR128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        // Headers only: libpulse is opened at run time when a command needs the sound server (see its shim.h).
        .systemLibrary(name: "CPulse", providers: [.apt(["libpulse-dev"])]),
        // Headers only: Linux calls glibc has and Swift's Glibc module does not show (signalfd).
        .systemLibrary(name: "CLinux"),
        // Headers only: what the processor can run (CPUID), for the loudness meter's AVX2 loops.
        .systemLibrary(name: "CCPU"),

        // One module per stage of the data flow.
        .target(name: "AudioFormat"),
        .target(name: "RingBuffer"),
        .target(name: "Realtime"),
        .target(name: "RecordPermission", dependencies: ["CLinux"]),
        .target(name: "SoundServer", dependencies: ["CPulse", "Capture", "AudioFormat", "Realtime", "RecordPermission"]),
        .target(name: "SignalGenerator", dependencies: ["AudioFormat"]),
        .target(name: "Capture", dependencies: ["CALSA", "AudioFormat", "RingBuffer", "Realtime", "RecordPermission"]),
        .target(name: "Encoding", dependencies: ["CFLAC", "COpusEnc", "AudioFormat"]),
        // Reads a damaged recording and writes it whole again (hark repair): FLAC, Ogg Opus, WAV.
        .target(name: "Repair", dependencies: ["Encoding", "CFLAC", "COpusEnc", "CLinux"]),
        // Measures a recording's loudness (EBU R128: integrated, range, true peak) for its gain tags.
        // Optimised in debug builds too: every recording runs its meter on the encoder thread, and
        // unoptimised, its vector loops cost the debug hark (which the tests drive) 30–50 times
        // more, enough to fall behind real time.
        .target(name: "Loudness", dependencies: ["AudioFormat", "LoudnessKernels", "CCPU"] + loudnessKernelsAVX2,
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // The meter's two inner loops, one source each, inlined where they are used: into Loudness
        // for every processor, and into LoudnessKernelsAVX2 for AVX2 with FMA. After changing only
        // the body of an @inlinable function here, touch those two modules' sources: SwiftPM's
        // incremental build did not recompile them (2026-11-25), and would test the old loops.
        .target(name: "LoudnessKernels", swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        .target(
            name: "Recorder",
            dependencies: ["AudioFormat", "RingBuffer", "Realtime", "Capture", "SoundServer", "Encoding", "RecordPermission", "Loudness", "CLinux"]
        ),
        .executableTarget(
            name: "hark",
            dependencies: ["Recorder", "RecordPermission", "Realtime", "SoundServer", "Capture", "Repair", "Loudness", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            // Release builds link the Swift runtime and Foundation-Essentials statically and as a
            // position-dependent executable: the dynamic loader then has no relocations to apply
            // across libswiftCore and Foundation, which cuts a recording's peak RSS by about 4 MiB
            // (21.3 → 17.2 MiB, Benchmarks/compare). Debug builds stay dynamic for fast links.
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-l_FoundationCShims", "-l_FoundationCollections", "-Xlinker", "-no-pie"],
                                          .when(configuration: .release))]
        ),
        // Reads the desktop's microphone switch through GSettings in a process of its own, so GIO
        // (about 4.5 MiB resident, and threads of its own) stays out of the recorder; see its main.c.
        // Installed in libexec/hark beside hark's bin (scripts/install).
        // SwiftPM links every executable through swiftc, whose start-up object needs the Swift runtime
        // even for C, so a debug build runs only where Swift is installed (the tests). A release
        // build leaves that object out and links the runtime statically, so none of it is linked:
        // the helper beside .build/release/hark then starts in 2.2 ms of CPU instead of 2.9 (it
        // loaded libswiftCore.so; `perf stat -r 30 hark-privacy-switch --once`), though still
        // linked against libstdc++ (swiftc's list for -static-stdlib). scripts/install compiles the
        // same main.c with the C compiler for an installed hark (1.8 ms).
        .executableTarget(name: "hark-privacy-switch",
                          linkerSettings: [.linkedLibrary("dl"),
                                           .unsafeFlags(["-static-stdlib", "-nostartfiles"], .when(configuration: .release))]),

        // A second app embedding the permission gate with its own identity (samples/README.md).
        .executableTarget(
            name: "voice-memo",
            dependencies: ["Recorder", "RecordPermission", "Capture", "Encoding", "AudioFormat"],
            path: "samples/VoiceMemo"
        ),

        // The deterministic music-like signal the tests and benchmarks use, as raw PCM on stdout.
        .executableTarget(name: "hark-signal", dependencies: ["SignalGenerator", "AudioFormat"], path: "samples/MusicSignal"),

        .testTarget(name: "RingBufferTests", dependencies: ["RingBuffer"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "SoundServer", "Realtime", "RingBuffer", "AudioFormat"]),
        .testTarget(name: "EncodingTests", dependencies: ["Encoding", "AudioFormat"]),
        .testTarget(name: "RepairTests", dependencies: ["Repair", "Encoding", "AudioFormat", "SignalGenerator"]),
        .testTarget(name: "LoudnessTests", dependencies: ["Loudness", "AudioFormat", "SignalGenerator", "CEBUR128"]),
        .testTarget(name: "RecordPermissionTests", dependencies: ["RecordPermission", "Capture", "AudioFormat", "SignalGenerator"]),
        .testTarget(name: "HarkCLITests", dependencies: ["AudioFormat", "SignalGenerator", "CLinux"]),
        .testTarget(name: "HarkCommandTests", dependencies: ["hark", "Recorder", "AudioFormat", "SignalGenerator"]),
    ] + loudnessKernelsAVX2Target
)

