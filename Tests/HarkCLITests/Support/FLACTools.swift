import Foundation
import Testing

/// The reference FLAC tools (`flac`, `metaflac`), used as independent decoders.
enum FLACTools {
    /// Decodes `path` (a file, or FLAC bytes) to samples with `flac -d`; with `from`, only the
    /// samples per channel in `from` (`--skip` and `--until`, which seek). `throughErrors` decodes
    /// past what is broken (`-F`), as for a file cut mid-frame by a kill.
    static func decode(_ path: String, bitsPerSample: Int, from range: Range<Int>? = nil, throughErrors: Bool = false) throws -> [Int32] {
        let raw = path + ".decoded.raw"
        let seek = range.map { ["--skip=\($0.lowerBound)", "--until=\($0.upperBound)"] } ?? []
        let result = try runTool("flac", ["-d", "-f", "-s", "--force-raw-format", "--endian=little", "--sign=signed"]
                                 + (throughErrors ? ["-F"] : []) + seek + ["-o", raw, path])
        guard result.status == 0 else { throw TestRigError("flac -d failed: \(result.standardError)") }
        defer { try? FileManager.default.removeItem(atPath: raw) }
        return decodeRawSamples(try Data(contentsOf: URL(fileURLWithPath: raw)), bitsPerSample: bitsPerSample)
    }

    /// Whether `flac -t` finds the file intact (frame CRCs and, when present, the MD5).
    static func test(_ path: String) throws -> ToolResult {
        try runTool("flac", ["-t", "-s", path])
    }

    /// STREAMINFO's total samples per channel.
    static func totalSamples(_ path: String) throws -> Int? {
        Int(try metaflac(["--show-total-samples", path]))
    }

    /// STREAMINFO's MD5 of the audio, as hex.
    static func md5(_ path: String) throws -> String {
        try metaflac(["--show-md5sum", path])
    }

    /// The VORBIS_COMMENT block's tags in order, as `KEY=VALUE` lines. `--no-utf8-convert`: metaflac
    /// would otherwise turn UTF-8 into the locale's charset ('?' under LANG=C).
    static func tags(_ path: String) throws -> [String] {
        try metaflac(["--no-utf8-convert", "--export-tags-to=-", path]).split(separator: "\n").map(String.init)
    }

    /// The VORBIS_COMMENT block's vendor string, e.g. "reference libFLAC 1.4.2 20221022".
    static func vendor(_ path: String) throws -> String? {
        let listing = try metaflac(["--no-utf8-convert", "--list", "--block-type=VORBIS_COMMENT", path])
        return listing.split(separator: "\n").lazy
            .compactMap { line in line.firstRange(of: "vendor string: ").map { String(line[$0.upperBound...]) } }
            .first
    }

    static func metaflac(_ arguments: [String]) throws -> String {
        let result = try runTool("metaflac", arguments)
        guard result.status == 0 else { throw TestRigError("metaflac failed: \(result.standardError)") }
        return String(decoding: result.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Checks a recording that was stopped early: `flac -t` passes, STREAMINFO's total equals the
/// frames that decode, and they are exactly the first frames of `signal`. Returns that total.
@discardableResult
func expectFinishedPrefix(_ path: String, of signal: TestSignal, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
    #expect(try FLACTools.test(path).status == 0, sourceLocation: sourceLocation)
    let total = try #require(try FLACTools.totalSamples(path), sourceLocation: sourceLocation)
    let decoded = try FLACTools.decode(path, bitsPerSample: signal.format.sampleFormat.encodedBitsPerSample)
    #expect(total > 0 && total * signal.format.channels == decoded.count,
            "STREAMINFO says \(total), decoded \(decoded.count / signal.format.channels)", sourceLocation: sourceLocation)
    expectSameElements(decoded[...], signal.prefix(frames: total), sourceLocation: sourceLocation)
    // `flac -t` verifies the MD5 only when one is set (else it merely warns): a finished file has one.
    #expect(try FLACTools.md5(path) != String(repeating: "0", count: 32), "no MD5 in STREAMINFO", sourceLocation: sourceLocation)
    return total
}
