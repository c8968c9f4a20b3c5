import ArgumentParser

/// `--max-size` and `--max-file-time`: when a recording stops at a size, and how it is split
/// into consecutive files.
struct LimitOptions: ParsableArguments {
    @Option(name: .customLong("max-size"), parsing: .unconditional,
            help: ArgumentHelp("Stop cleanly before the output (all its files together, when split) would pass this size, so it ends at most this size: bytes, or with k, M or G (powers of 1024; kB, MB, GB: of 1000), e.g. 650M.",
                               valueName: "size"))
    var maxSize: ByteSize?

    @Option(name: .customLong("max-file-time"), parsing: .unconditional,
            help: ArgumentHelp("Start a new file every this long (seconds, or with a unit: 90, 30m, 1h); -o may hold strftime patterns such as rec-%Y%m%d-%H%M%S.flac, and a name that repeats gets -2, -3, … SIGUSR1 starts a new file at once, in every file output.",
                               valueName: "duration"))
    var maxFileDuration: DurationArgument?

    /// Seconds per file (`--max-file-time`).
    var maxFileTime: Double? { maxFileDuration?.seconds }

    func validate(outputIsStandardOutput: Bool) throws {
        if let maxFileTime {
            guard maxFileTime.isFinite, maxFileTime >= 1 else {
                throw ValidationError("--max-file-time must be at least 1 second")
            }
            guard !outputIsStandardOutput else {
                throw ValidationError("--max-file-time splits into files; it cannot split stdout")
            }
        }
        if let maxSize, maxSize.bytes < 64 * 1024 {
            throw ValidationError("--max-size \(maxSize.text) is \(maxSize.bytes) bytes, under the 64k (65536-byte) minimum")
        }
    }
}

/// A size as people type it, as `head -c` and `dd` read one: "1048576", "500k", "650M", "1.5G"
/// (k, M, G and KiB, MiB, GiB are powers of 1024; kB, MB, GB powers of 1000, as coreutils has
/// them: "1MB" took 1 MiB).
struct ByteSize: ExpressibleByArgument, Equatable {
    let bytes: Int
    let text: String

    init?(argument: String) {
        var digits = Substring(argument)
        var base = 1024.0
        if digits.hasSuffix("iB") {
            digits = digits.dropLast(2)
            guard let last = digits.last, "kKmMgG".contains(last) else { return nil }  // "10iB"
        } else if digits.hasSuffix("B") {
            digits = digits.dropLast()
            if let last = digits.last, "kKmMgG".contains(last) { base = 1000 }  // "10B" is 10 bytes
        }
        var multiplier = 1.0
        if let last = digits.last, let power = ["k": 1, "K": 1, "m": 2, "M": 2, "g": 3, "G": 3][last] {
            multiplier = (0..<power).reduce(1.0) { product, _ in product * base }
            digits = digits.dropLast()
        }
        guard let value = Double(digits), value.isFinite, value > 0, !digits.hasPrefix("+"),
              value * multiplier < Double(Int.max / 2) else { return nil }
        bytes = Int(value * multiplier)
        text = argument
    }
}
