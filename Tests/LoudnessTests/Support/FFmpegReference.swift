import Foundation

/// FFmpeg's `ebur128` filter as a reference meter: its own BS.1770 implementation, independent of
/// hark's and of libebur128 (the other reference, `LibEBUR128Reference`).
///
/// FFmpeg prints its summary with one decimal, so every comparison allows 0.05 for that rounding
/// on top of the tolerance it states.
struct FFmpegReference {
    /// FFmpeg's summary of one input.
    struct Summary {
        var integrated: Double
        var loudnessRange: Double
        var samplePeakDBFS: Double
        var truePeakDBTP: Double
        /// The input's channel layout as FFmpeg names it ("stereo", "5.1").
        var layout: String
    }

    /// ffmpeg on PATH, or nil (the tests that need it are then skipped, saying why).
    static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: "\($0)/ffmpeg") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    static var isAvailable: Bool { executable != nil }
    static let skipReason = "needs ffmpeg, the reference meter (apt-get install ffmpeg; scripts/install-deps)"

    /// Measures raw interleaved S16_LE `bytes` with
    /// `ffmpeg -f s16le -ar RATE -ac CHANNELS -i FILE -af ebur128=peak=true+sample -f null -`.
    ///
    /// `framelog=verbose` keeps the per-100 ms lines out of the output at FFmpeg's default log
    /// level (`framelog=quiet` is not a value FFmpeg 5.1 accepts). Six channels are FFmpeg's
    /// default 5.1 (FL FR FC LFE BL BR), which `Summary.layout` lets a test confirm.
    static func measure(s16 bytes: [UInt8], channels: Int, sampleRate: Int) throws -> Summary {
        guard let executable else { throw ReferenceError(skipReason) }
        let input = FileManager.default.temporaryDirectory
            .appendingPathComponent("hark-loudness-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).raw")
        try Data(bytes).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }

        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "-nostdin", "-nostats", "-hide_banner",
            "-f", "s16le", "-ar", "\(sampleRate)", "-ac", "\(channels)", "-i", input.path,
            "-af", "ebur128=peak=true+sample:framelog=verbose", "-f", "null", "-",
        ]
        let errorPipe = Pipe()
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReferenceError("ffmpeg exited with \(process.terminationStatus):\n\(output)")
        }
        return try parse(output)
    }

    /// Reads the "Summary:" block:
    ///
    ///       Integrated loudness:
    ///         I:         -20.0 LUFS
    ///       Loudness range:
    ///         LRA:         0.0 LU
    ///       Sample peak:
    ///         Peak:      -20.0 dBFS
    ///       True peak:
    ///         Peak:      -20.0 dBFS
    static func parse(_ output: String) throws -> Summary {
        guard let summaryStart = output.range(of: "Summary:") else {
            throw ReferenceError("no Summary: in ffmpeg's output:\n\(output)")
        }
        var integrated: Double?, range: Double?, samplePeak: Double?, truePeak: Double?
        var section = ""
        for line in output[summaryStart.upperBound...].split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let first = fields.first else { continue }
            switch first {
            case "Sample", "True", "Integrated", "Loudness": section = String(first)
            case "I:": integrated = fields.count > 1 ? Double(fields[1]) : nil
            case "LRA:": range = fields.count > 1 ? Double(fields[1]) : nil
            case "Peak:":
                let value = fields.count > 1 ? Double(fields[1]) : nil
                if section == "Sample" { samplePeak = value } else if section == "True" { truePeak = value }
            default: break
            }
        }
        let layout = output.split(separator: "\n").first { $0.contains("Stream #0:0: Audio:") }
            .map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            .flatMap { $0.count > 2 ? $0[2] : nil } ?? "?"
        guard let integrated, let range, let samplePeak, let truePeak else {
            throw ReferenceError("could not read ffmpeg's summary:\n\(output[summaryStart.lowerBound...])")
        }
        return Summary(integrated: integrated, loudnessRange: range, samplePeakDBFS: samplePeak,
                       truePeakDBTP: truePeak, layout: layout)
    }
}

struct ReferenceError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
