import Foundation
import Testing

/// The reference Opus tools (`opusinfo`, `opusdec` from opus-tools), used as independent checks.
enum OpusTools {
    /// `opusinfo`'s verdict: its exit status and whether it printed any warning or error.
    static func info(_ path: String) throws -> (isClean: Bool, text: String) {
        let result = try runTool("opusinfo", [path])
        let text = String(decoding: result.standardOutput, as: UTF8.self) + result.standardError
        let complaint = text.range(of: "warning", options: .caseInsensitive) != nil
            || text.range(of: "error", options: .caseInsensitive) != nil
        return (result.status == 0 && !complaint, text)
    }

    /// OpusTags as `opusinfo` prints them: the vendor string ("Encoded with …") and the comments in
    /// order, as `KEY=VALUE` (opusinfo writes them tab-indented, in UTF-8 whatever the locale).
    static func tags(_ path: String) throws -> (vendor: String?, comments: [String]) {
        let lines = try info(path).text.split(separator: "\n", omittingEmptySubsequences: false)
        let vendor = lines.lazy.compactMap { line in
            line.hasPrefix("Encoded with ") ? String(line.dropFirst("Encoded with ".count)) : nil
        }.first
        guard let start = lines.firstIndex(where: { $0.hasPrefix("User comments section follows") }) else {
            return (vendor, [])
        }
        let comments = lines[(start + 1)...].prefix { $0.hasPrefix("\t") }.map { String($0.dropFirst()) }
        return (vendor, comments)
    }

    /// Decodes with `opusdec` at 48 kHz into interleaved 16-bit samples and the channel count;
    /// `dithered: false` leaves out opusdec's dither (a few LSB of shaped noise), so silence
    /// decodes as zeros.
    static func decode(_ path: String, dithered: Bool = true) throws -> (samples: [Int16], channels: Int) {
        let wav = path + ".decoded.wav"
        let result = try runTool("opusdec", ["--quiet", "--rate", "48000", "--force-wav"] + (dithered ? [] : ["--no-dither"]) + [path, wav])
        guard result.status == 0 else { throw TestRigError("opusdec failed: \(result.standardError)") }
        defer { try? FileManager.default.removeItem(atPath: wav) }
        return try WAVFile.read16Bit(Data(contentsOf: URL(fileURLWithPath: wav)))
    }
}

/// The parts of a 16-bit PCM WAV file opusdec writes.
enum WAVFile {
    static func read16Bit(_ data: Data) throws -> (samples: [Int16], channels: Int) {
        let bytes = [UInt8](data)
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        guard bytes.count >= 12, Array(bytes[0..<4]) == Array("RIFF".utf8) else { throw TestRigError("not a WAV file") }
        var offset = 12
        var channels = 0
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            // opusdec streams the WAV, so a data size it could not know may be 0xFFFFFFFF; clamp it.
            let size = min(u32(offset + 4), bytes.count - offset - 8)
            if id == "fmt " {
                channels = u16(offset + 10)
                guard u16(offset + 22) == 16 else { throw TestRigError("not 16-bit PCM") }
            } else if id == "data" {
                let body = bytes[(offset + 8)..<(offset + 8 + size)]
                var samples = [Int16](repeating: 0, count: body.count / 2)
                for index in samples.indices {
                    samples[index] = Int16(bitPattern: UInt16(body[body.startIndex + 2 * index]) | UInt16(body[body.startIndex + 2 * index + 1]) << 8)
                }
                return (samples, channels)
            }
            offset += 8 + size + (size & 1)
        }
        throw TestRigError("WAV file without data")
    }
}

/// Signal-to-noise ratio in dB of `decoded` against `reference` (one channel each), after finding
/// the lag within ±`maxLag` samples that best aligns them.
func alignedSNR(reference: [Double], decoded: [Double], maxLag: Int = 960) -> (snr: Double, lag: Int) {
    let window = min(20_000, reference.count - 2 * maxLag, decoded.count - 2 * maxLag)
    let start = maxLag
    var bestLag = 0
    var bestCorrelation = -Double.infinity
    for lag in -maxLag...maxLag {
        var correlation = 0.0
        for index in stride(from: start, to: start + window, by: 2) {
            correlation += reference[index] * decoded[index + lag]
        }
        if correlation > bestCorrelation {
            bestCorrelation = correlation
            bestLag = lag
        }
    }
    var signalEnergy = 0.0
    var noiseEnergy = 0.0
    let first = max(0, -bestLag) + 2_400   // skip the codec's start-up
    let last = min(reference.count, decoded.count - bestLag) - 2_400
    for index in first..<last {
        let error = reference[index] - decoded[index + bestLag]
        signalEnergy += reference[index] * reference[index]
        noiseEnergy += error * error
    }
    return (10 * log10(signalEnergy / max(noiseEnergy, 1e-9)), bestLag)
}

/// One channel of interleaved samples, as doubles.
func channel<T: BinaryInteger>(_ channel: Int, of samples: [T], channels: Int) -> [Double] {
    stride(from: channel, to: samples.count, by: channels).map { Double(samples[$0]) }
}
