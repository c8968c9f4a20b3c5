import AudioFormat
@testable import Encoding
import Foundation
import Testing

/// The one Ogg page hark builds itself (`OggPage.silentEndOfStream`, for a recording that stopped
/// before any audio), its CRC, and the stream it ends, checked by opusinfo (opus-tools) rather than
/// by hark's own reading of the format.
@Suite struct OggOpusEndOfStreamTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// Ogg's CRC (RFC 3533: polynomial 0x04C11DB7, initial value 0, not reflected, no final xor)
    /// of "123456789" is 0x89A1897F: computed with libogg's own `ogg_page_checksum_set` (26 zero
    /// header bytes, which leave a zero-initialised CRC at 0, then the nine digits as the body) and
    /// with a bit-by-bit Python model. (0xFC891918 is CRC-32/BZIP2, the same polynomial with
    /// initial value and final xor 0xFFFFFFFF; 0xCBF43926 is the reflected zlib CRC.)
    @Test func crcMatchesOggsCheckValue() {
        #expect(OggPage.crc32(Array("123456789".utf8)) == 0x89A1_897F)
        #expect(OggPage.crc32([]) == 0)
        #expect(OggPage.crc32(Array("OggS".utf8)) == 0x5FB0_A94F)
    }

    @Test func crcAgreesWithEveryPageLibopusencWrote() throws {
        let file = try EncodedFile { encoder in
            let silence = [Int16](repeating: 0, count: 48_000 * 2)
            try silence.withUnsafeBytes { try encoder.encode($0) }
        }
        let pages = OggBytes.pages(file.bytes)
        #expect(pages.count >= 4, "OpusHead, OpusTags, audio, EOS")
        for (index, page) in pages.enumerated() {
            var zeroed = page
            zeroed.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            #expect(OggPage.crc32(zeroed) == OggBytes.u32(page, 22), "page \(index)")
        }
    }

    @Test func aStreamWithNoAudioEndsCleanlyWithZeroSamples() throws {
        let file = try EncodedFile { _ in }
        let info = try opusinfo(file.path)
        #expect(info.status == 0, "\(info.text)")
        #expect(info.text.range(of: "warning", options: .caseInsensitive) == nil
                && info.text.range(of: "error", options: .caseInsensitive) == nil, "\(info.text)")
        #expect(info.text.contains("Playback length: 0m:00.000s"), "\(info.text)")
        let wav = file.path + ".wav"
        defer { try? FileManager.default.removeItem(atPath: wav) }
        let decoded = try runOpusTool("opusdec", ["--quiet", "--force-wav", file.path, wav])
        #expect(decoded.status == 0, "\(decoded.text)")
        // A 44-byte canonical WAV header and no samples.
        #expect(try Data(contentsOf: URL(fileURLWithPath: wav)).count == 44, "opusdec decodes 0 samples")

        let pages = OggBytes.pages(file.bytes)
        try #require(pages.count == 3, "OpusHead, OpusTags and hark's EOS page")
        #expect(pages.map { OggBytes.u32($0, 18) } == [0, 1, 2], "page sequence numbers")
        #expect(Set(pages.map { OggBytes.u32($0, 14) }).count == 1, "one serial number")
        #expect(pages.map { $0[5] } == [0x02, 0x00, 0x04], "BOS, then nothing, then EOS")
        // OpusHead (19 bytes, one lacing value) starts at byte 28 of its page; pre-skip is at 10.
        let preSkip = Int(pages[0][28 + 10]) | Int(pages[0][28 + 11]) << 8
        #expect(OggBytes.granule(pages[2]) == Int64(preSkip), "granule = pre-skip: 0 samples to play")
    }

    /// A surround stream (RFC 7845 mapping family 1: 3–8 channels in 2–5 elementary streams)
    /// stopped before any audio: its silent packet has a part for every stream, as a multistream
    /// decoder wants. Until 2026-11-28 it held one stream's, which libopus rejects ("corrupted
    /// stream"): opusdec failed on the file, and `hark repair` on one killed before its first page.
    @Test(arguments: [3, 6, 8]) func aSurroundStreamWithNoAudioDecodesToZeroSamples(channels: Int) throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: channels, sampleRate: 48_000)
        let file = try EncodedFile(format: format, layout: ChannelLayout.waveDefault(channels: channels)) { _ in }
        let wav = file.path + ".wav"
        defer { try? FileManager.default.removeItem(atPath: wav) }
        let decoded = try runOpusTool("opusdec", ["--quiet", "--force-wav", file.path, wav])
        #expect(decoded.status == 0, "\(decoded.text)")
        #expect(!decoded.text.contains("rror"), "\(decoded.text)")
        let info = try opusinfo(file.path)
        #expect(info.text.contains("Playback length: 0m:00.000s") && info.text.contains("Channels: \(channels)"), "\(info.text)")
    }

    @Test func opusinfoRefusesTheEndPageWithACorruptedCRC() throws {
        // The control for the test above: opusinfo does read and check hark's page.
        let file = try EncodedFile { _ in }
        var bytes = file.bytes
        let lastPage = OggBytes.pageRanges(bytes).last!.lowerBound
        bytes[lastPage + 22] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: file.path))
        let info = try opusinfo(file.path)
        // libogg drops the page ("Hole in data … Corrupted Ogg"), so the stream has no EOS.
        #expect(info.text.contains("Corrupted Ogg") && info.text.contains("EOS not set"), "\(info.text)")
    }
}

/// An Ogg Opus file written by `OggOpusEncoder` through a file `OutputSink`, removed on deinit.
private final class EncodedFile {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("hark-ogg-\(UUID().uuidString.prefix(8)).opus").path

    init(format: PCMFormat = OggOpusEndOfStreamTests.format, layout: ChannelLayout? = nil, settings: OpusSettings = OpusSettings(),
         _ feed: (OggOpusEncoder) throws -> Void) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let encoder = try OggOpusEncoder(format: format, settings: settings, sink: OutputSink(fileDescriptor: descriptor), layout: layout)
        try feed(encoder)
        try encoder.finish()
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var bytes: [UInt8] { (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? [] }
}

/// Raw Ogg pages (RFC 3533), read without hark's code.
private enum OggBytes {
    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    static func granule(_ page: [UInt8]) -> Int64 {
        (0..<8).reduce(Int64(0)) { $0 | Int64(page[6 + $1]) << (8 * $1) }
    }

    /// Where each complete page lies; stops at the first byte that does not start one.
    static func pageRanges(_ bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var offset = 0
        while offset + 27 <= bytes.count, bytes[offset..<offset + 4].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[offset + 26])
            guard offset + 27 + segments <= bytes.count else { break }
            let end = offset + 27 + segments + bytes[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
            guard end <= bytes.count else { break }
            ranges.append(offset..<end)
            offset = end
        }
        return ranges
    }

    static func pages(_ bytes: [UInt8]) -> [[UInt8]] { pageRanges(bytes).map { Array(bytes[$0]) } }
}

/// `opusinfo PATH`: exit status and everything it printed.
private func opusinfo(_ path: String) throws -> (status: Int32, text: String) { try runOpusTool("opusinfo", [path]) }

/// Runs an opus-tools program found on PATH; its exit status and everything it printed.
private func runOpusTool(_ name: String, _ arguments: [String]) throws -> (status: Int32, text: String) {
    let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    guard let tool = searchPath.split(separator: ":").map({ "\($0)/\(name)" })
        .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw OpusToolMissing(name: name)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

private struct OpusToolMissing: Error, CustomStringConvertible {
    let name: String
    var description: String { "\(name) is not installed (opus-tools; run scripts/install-deps)" }
}
