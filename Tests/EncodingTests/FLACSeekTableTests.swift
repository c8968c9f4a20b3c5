import AudioFormat
import Encoding
import Foundation
import Testing

/// The seek table's degradation past what it was sized for, checked on the bytes libFLAC wrote.
@Suite struct FLACSeekTableTests {
    @Test func aFullTableDoublesItsSpacingAndKeepsEveryOtherPoint() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 1, sampleRate: 8_000)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hark-seek-\(getpid()).flac").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor); unlink(path) }

        // Four points cover 0–40 s at 10 s; 100 s needs them at 40 s spacing: 0, 40, 80.
        let encoder = try FLACEncoder(format: format, settings: FLACSettings(), sink: OutputSink(fileDescriptor: descriptor),
                                      seekPointCapacity: 4)
        var samples = [Int16](repeating: 0, count: 8_000)
        var state: UInt32 = 1
        for second in 0..<100 {
            for index in samples.indices {
                state = state &* 1_664_525 &+ 1_013_904_223
                samples[index] = Int16(truncatingIfNeeded: state >> 20) &+ Int16(second)
            }
            try samples.withUnsafeBytes { try encoder.encode($0) }
        }
        try encoder.finish()

        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let (points, audioStart) = try #require(seekTable(in: bytes))
        let real = points.filter { $0.sample != UInt64.max }
        let frameSamples = try #require(real.first?.frameSamples)
        let expected = [0, 40, 80].map { UInt64($0 * 8_000 / frameSamples * frameSamples) }
        #expect(real.map(\.sample) == expected, "\(points)")
        #expect(points.count == 4 && points.last?.sample == UInt64.max, "the freed point stays a placeholder")
        for point in real {
            let offset = audioStart + Int(point.offset)
            #expect(bytes[offset] == 0xFF && bytes[offset + 1] == 0xF8, "a frame header at \(point)")
        }
    }

    /// The SEEKTABLE's points and where the first frame starts, read from the file's bytes.
    private func seekTable(in bytes: [UInt8]) -> (points: [(sample: UInt64, offset: UInt64, frameSamples: Int)], audioStart: Int)? {
        var offset = 4
        var points: [(sample: UInt64, offset: UInt64, frameSamples: Int)] = []
        while offset + 4 <= bytes.count {
            let isLast = bytes[offset] & 0x80 != 0
            let type = bytes[offset] & 0x7F
            let length = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if type == 3 {
                for start in stride(from: offset + 4, to: offset + 4 + length, by: 18) {
                    let number = { (at: Int, count: Int) in bytes[at..<(at + count)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
                    points.append((number(start, 8), number(start + 8, 8), Int(number(start + 16, 2))))
                }
            }
            offset += 4 + length
            if isLast { return points.isEmpty ? nil : (points, offset) }
        }
        return nil
    }
}
