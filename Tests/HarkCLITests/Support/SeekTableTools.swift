import Foundation
import Testing

/// A FLAC file's SEEKTABLE as `metaflac --list` shows it.
struct SeekTableListing {
    struct Point: Equatable {
        let sampleNumber: Int
        let streamOffset: Int
        let frameSamples: Int
    }

    /// The real seek points, in order.
    let points: [Point]
    /// Points left as placeholders (reserved space).
    let placeholders: Int

    /// The SEEKTABLE of `path`, or nil when it has none.
    static func read(_ path: String) throws -> SeekTableListing? {
        let listing = try FLACTools.metaflac(["--list", "--block-type=SEEKTABLE", path])
        guard listing.contains("type: 3 (SEEKTABLE)") else { return nil }
        var points: [Point] = []
        var placeholders = 0
        for line in listing.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) where line.hasPrefix("point ") {
            if line.hasSuffix("PLACEHOLDER") {
                placeholders += 1
                continue
            }
            // "point 1: sample_number=479232, stream_offset=1403880, frame_samples=4096"
            var fields: [String: Int] = [:]
            for field in line.split(separator: ":", maxSplits: 1)[1].split(separator: ",") {
                let pair = field.trimmingCharacters(in: .whitespaces).split(separator: "=")
                fields[String(pair[0])] = Int(pair[1])
            }
            points.append(Point(sampleNumber: fields["sample_number"]!, streamOffset: fields["stream_offset"]!,
                                frameSamples: fields["frame_samples"]!))
        }
        return SeekTableListing(points: points, placeholders: placeholders)
    }
}

/// Checks every seek point of `path` against the bytes it points at: the offset (counted from the
/// first frame, which follows the last metadata block) is a frame header whose frame number says
/// the frame starts at the point's sample number, and the point lies inside the stream.
func expectSeekPointsNameTheirFrames(_ path: String, _ table: SeekTableListing,
                                     sourceLocation: SourceLocation = #_sourceLocation) throws {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let total = try #require(try FLACTools.totalSamples(path), sourceLocation: sourceLocation)
    let blockSize = try #require(Int(try FLACTools.metaflac(["--show-max-blocksize", path])), sourceLocation: sourceLocation)
    let audioStart = try #require(firstFrameOffset(bytes), sourceLocation: sourceLocation)
    #expect(table.points.map(\.sampleNumber) == table.points.map(\.sampleNumber).sorted(), sourceLocation: sourceLocation)
    for point in table.points {
        #expect(point.sampleNumber + point.frameSamples <= total, "\(point) past the end (\(total))", sourceLocation: sourceLocation)
        let offset = audioStart + point.streamOffset
        try #require(offset + 16 <= bytes.count, "\(point) points past the file's end", sourceLocation: sourceLocation)
        // Fixed-blocksize frames start with the sync code 0xFFF8, then the frame number, coded like UTF-8.
        #expect(bytes[offset] == 0xFF && bytes[offset + 1] == 0xF8, "no frame header at \(point)", sourceLocation: sourceLocation)
        #expect(codedNumber(bytes, at: offset + 4) * blockSize == point.sampleNumber, "\(point)", sourceLocation: sourceLocation)
    }
}

/// Where the first audio frame starts: after "fLaC" and the metadata block flagged last (each block
/// a type byte, 0x80 on the last one, and a 24-bit length); nil when the metadata is cut short.
func firstFrameOffset(_ bytes: [UInt8]) -> Int? {
    var offset = 4
    while offset + 4 <= bytes.count {
        let isLast = bytes[offset] & 0x80 != 0
        let length = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
        offset += 4 + length
        if isLast { return offset }
    }
    return nil
}

/// A frame header's UTF-8-style coded number.
private func codedNumber(_ bytes: [UInt8], at offset: Int) -> Int {
    let first = bytes[offset]
    guard first & 0x80 != 0 else { return Int(first) }
    var length = 0
    while first << length & 0x80 != 0 { length += 1 }
    var value = Int(first & (0xFF >> (length + 1)))
    for index in 1..<length { value = value << 6 | Int(bytes[offset + index] & 0x3F) }
    return value
}
