import ArgumentParser

/// `--max-size` and `--max-file-time`: when a recording stops at a size, and how it is split
/// into consecutive files.
struct LimitOptions: ParsableArguments {
    @Option(name: .customLong("max-size"), parsing: .unconditional,
            help: ArgumentHelp("Stop cleanly before the output (all its files together, when split) would pass this size, so it ends at most this size: bytes, or with k, M or G (powers of 1024), e.g. 650M.",
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
            throw ValidationError("--max-size \(maxSize.text) is under the 64k minimum")
        }
    }
}

/// A size as people type it: "1048576", "500k", "650M", "1.5G" (k, M, G are powers of 1024, as
/// in `head -c` and `dd`; a trailing "B" or "iB" is accepted).
struct ByteSize: ExpressibleByArgument, Equatable {
    let bytes: Int
    let text: String

    init?(argument: String) {
        var digits = Substring(argument)
        for unit in ["iB", "B"] where digits.hasSuffix(unit) { digits = digits.dropLast(unit.count); break }
        var multiplier = 1.0
        if let last = digits.last, let power = ["k": 1, "K": 1, "m": 2, "M": 2, "g": 3, "G": 3][last] {
            multiplier = pow1024(power)
            digits = digits.dropLast()
        }
        guard let value = Double(digits), value.isFinite, value > 0, !digits.hasPrefix("+"),
              value * multiplier < Double(Int.max / 2) else { return nil }
        bytes = Int(value * multiplier)
        text = argument
    }
}

private func pow1024(_ power: Int) -> Double {
    (0..<power).reduce(1.0) { product, _ in product * 1024 }
}
