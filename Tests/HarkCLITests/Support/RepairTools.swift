import AudioFormat
import Foundation
import Testing

/// What the repair tests check files with: hark repair itself, and the independent readers.
enum RepairTools {
    static func repair(_ arguments: [String], rig: ALSATestRig) throws -> ToolResult {
        try runHark(["repair"] + arguments, rig: rig)
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// The WAV's audio bytes as Python's `wave` module reads them (it trusts the data size).
    static func pythonWAVFrames(_ path: String) throws -> (frames: Int, data: Data) {
        let script = "import sys, wave\nw = wave.open(sys.argv[1])\nsys.stdout.buffer.write(w.readframes(w.getnframes()))"
        let result = try runTool("python3", ["-c", script, path])
        guard result.status == 0 else { throw TestRigError("python3 wave \(path): \(result.standardError)") }
        return (result.standardOutput.count / 4, result.standardOutput)
    }

    /// Decoded 16-bit stereo samples of a FLAC, Opus or WAV file by the format's own reference tool.
    static func decode(_ path: String, codec: String) throws -> [Int32] {
        switch codec {
        case "flac": return try FLACTools.decode(path, bitsPerSample: 16)
        case "opus": return try OpusTools.decode(path).samples.map(Int32.init)
        default:
            let raw = try WAVAndRawOutputTests.soxSamples(path, scratch: path)
            return decodeRawSamples(raw, bitsPerSample: 16)
        }
    }

    /// Whether the format's reference checker finds nothing wrong.
    static func isClean(_ path: String, codec: String) throws -> Bool {
        switch codec {
        case "flac": return try FLACTools.test(path).status == 0
        case "opus": return try OpusTools.info(path).isClean
        default: return try runTool("sox", ["--i", path]).status == 0 && (try? pythonWAVFrames(path)) != nil
        }
    }

    /// Flips one bit of the byte at `offset` of the file: the damage a bad sector or a cosmic ray does.
    static func flipBit(_ path: String, at offset: Int) throws {
        var data = try bytes(path)
        data[offset] ^= 0x10
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Files whose names start with "." in `directory` (repair's temporary files are hidden).
    static func hiddenFiles(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".") }
    }
}
