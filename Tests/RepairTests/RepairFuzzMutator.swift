import Encoding
import SignalGenerator

/// The damage the repair fuzzer does to a seed: what disks, cut pipes and killed writers do (a
/// flipped bit, a cut, a run of zeros) and what reaches the sums in the repair code (a header field
/// set to an extreme, a page's field changed with its CRC made right again, a frame or chunk
/// repeated or dropped). Each change is named, so a failure says how to make its file again.
struct RepairFuzzMutator {
    var random: SplitMix64

    static let extremes: [[UInt8]] = [
        [0xFF, 0xFF, 0xFF, 0xFF], [0x00, 0x00, 0x00, 0x80], [0, 0, 0, 0], [0x80, 0, 0, 0], [0xFF, 0xFF, 0xFF, 0x7F],
        [1, 0, 0, 0], [0xFE, 0xFF, 0xFF, 0xFF], [0xFF, 0xFF], [0, 0], [0xFF], [0],
        [UInt8](repeating: 0xFF, count: 8), [0, 0, 0, 0, 0, 0, 0, 0x80],
    ]

    /// One to five changes to `bytes`; what was done, in order.
    mutating func mutate(_ bytes: inout [UInt8], _ container: RepairFuzzSeed.Container) -> [String] {
        var done: [String] = []
        for _ in 0..<[1, 1, 1, 2, 3, 5][random.next(below: 6)] where !bytes.isEmpty {
            switch random.next(below: 10) {
            case 0:
                for _ in 0..<[1, 1, 2, 8][random.next(below: 4)] {
                    let at = nearTheStart(bytes.count, within: 400), bit = random.next(below: 8)
                    bytes[at] ^= 1 << bit
                    done.append("bit \(bit) of byte \(at) flipped")
                }
            case 1:
                let at = nearTheStart(bytes.count, within: 300)
                let value = [0, 0xFF, random.next(below: 256)][random.next(below: 3)]
                bytes[at] = UInt8(value)
                done.append("byte \(at) set to \(value)")
            case 2:
                let at = random.next(below: 10) < 7 ? random.next(below: bytes.count + 1) : random.next(below: min(bytes.count, 200) + 1)
                bytes.removeSubrange(at...)
                done.append("cut at \(at)")
            case 3, 4:
                let units = Self.units(of: bytes, container)
                guard !units.isEmpty else { continue }
                let unit = units[random.next(below: units.count)]
                if random.next(below: 2) == 0 {
                    let to = random.next(below: 2) == 0 ? units[random.next(below: units.count)].lowerBound : unit.lowerBound
                    bytes.insert(contentsOf: bytes[unit], at: to)
                    done.append("bytes \(unit) repeated at \(to)")
                } else {
                    bytes.removeSubrange(unit)
                    done.append("bytes \(unit) dropped")
                }
            case 5, 6:
                let value = Self.extremes[random.next(below: Self.extremes.count)]
                let at = random.next(below: max(1, min(bytes.count, 200)))
                let end = min(bytes.count, at + value.count)
                bytes.replaceSubrange(at..<end, with: value.prefix(end - at))
                done.append("bytes from \(at) set to \(value)")
            case 7:
                let at = random.next(below: bytes.count), count = [4, 64, 1_000, 10_000][random.next(below: 4)]
                let value: UInt8 = random.next(below: 2) == 0 ? 0 : 0xFF
                let end = min(bytes.count, at + count)
                bytes.replaceSubrange(at..<end, with: repeatElement(value, count: end - at))
                done.append("bytes \(at)..<\(end) set to \(value)")
            case 8 where container == .opus:
                done.append(changeAnOggPageField(&bytes))
            case 9 where container != .wav && random.next(below: 2) == 0:
                done.append(insertFalseHeaders(&bytes, container))
            default:
                let at = random.next(below: bytes.count + 1), count = [1, 3, 17, 4_096][random.next(below: 4)]
                bytes.insert(contentsOf: (0..<count).map { _ in UInt8(random.next(below: 256)) }, at: at)
                done.append("\(count) random bytes inserted at \(at)")
            }
        }
        return done
    }

    /// Anywhere, or (half the time) among the first `within` bytes, where the headers are.
    private mutating func nearTheStart(_ count: Int, within: Int) -> Int {
        random.next(below: 2) == 0 ? random.next(below: count) : random.next(below: min(count, within))
    }

    /// One field of one page (type, granule, serial, sequence, segment count, first lacing value)
    /// set to all ones, all zeros or random bytes; mostly with the page's CRC made right again, so
    /// the page is taken as whole and the value reaches the repair's arithmetic.
    private mutating func changeAnOggPageField(_ bytes: inout [UInt8]) -> String {
        let pages = Self.oggPages(bytes)
        guard !pages.isEmpty else { return "no Ogg page to change" }
        let page = pages[random.next(below: pages.count)]
        let (field, offset, width) = [("type", 5, 1), ("granule", 6, 8), ("serial", 14, 4), ("sequence", 18, 4),
                                      ("segment count", 26, 1), ("first lacing value", 27, 1)][random.next(below: 6)]
        let value: [UInt8] = switch random.next(below: 3) {
        case 0: [UInt8](repeating: 0xFF, count: width)
        case 1: [UInt8](repeating: 0, count: width)
        default: (0..<width).map { _ in UInt8(random.next(below: 256)) }
        }
        let start = page.lowerBound + offset
        guard start + width <= bytes.count else { return "the page at \(page.lowerBound) too short for its \(field)" }
        bytes.replaceSubrange(start..<(start + width), with: value)
        let fixCRC = random.next(below: 10) < 7
        if fixCRC { Self.setOggCRC(&bytes, pageAt: page.lowerBound) }
        return "the \(field) of the page at \(page.lowerBound) set to \(value)\(fixCRC ? ", its CRC made right" : "")"
    }

    /// A run of false headers before a frame or page: the first 16 bytes of a FLAC frame (its header,
    /// whole, and the start of its audio), or an Ogg page's header and segment table without its
    /// body, repeated 2, 60 or 700 times. Each copy reads as a header; the search through the run
    /// must judge every one (`FLACFrameEndIndex`, `OggCRCWindow`).
    private mutating func insertFalseHeaders(_ bytes: inout [UInt8], _ container: RepairFuzzSeed.Container) -> String {
        let units = Self.units(of: bytes, container)
        guard !units.isEmpty else { return "no frame or page to copy a header from" }
        let unit = units[random.next(below: units.count)], to = units[random.next(below: units.count)].lowerBound
        let headerLength = container == .opus ? 27 + Int(bytes[unit.lowerBound + 26]) : 16
        guard unit.count >= headerLength else { return "the unit at \(unit.lowerBound) is shorter than a header" }
        let copies = [2, 60, 700][random.next(below: 3)]
        let header = bytes[unit.lowerBound..<(unit.lowerBound + headerLength)]
        bytes.insert(contentsOf: (0..<copies).flatMap { _ in header }, at: to)
        return "the \(headerLength)-byte header at \(unit.lowerBound) inserted \(copies) times at \(to)"
    }

    /// The repeatable units of a file: its Ogg pages, its FLAC frames (from one sync code to the
    /// next, roughly: a sync code may also occur inside a frame) or its RIFF chunks.
    static func units(of bytes: [UInt8], _ container: RepairFuzzSeed.Container) -> [Range<Int>] {
        switch container {
        case .opus:
            return oggPages(bytes)
        case .flac:
            // A plain loop over the buffer: a filter's closure per byte took a sixth of the suite's
            // run in the debug build.
            let syncs = bytes.withUnsafeBufferPointer { bytes in
                var syncs: [Int] = []
                var index = 4
                while index + 1 < bytes.count {
                    if bytes[index] == 0xFF && bytes[index + 1] & 0xFE == 0xF8 { syncs.append(index) }
                    index += 1
                }
                return syncs
            }
            return zip(syncs, syncs.dropFirst()).map { $0..<$1 }
        case .wav:
            var chunks: [Range<Int>] = [], position = 12
            while position + 8 <= bytes.count {
                let size = (0..<4).reduce(0) { $0 | Int(bytes[position + 4 + $1]) << (8 * $1) }
                let end = min(bytes.count, position + 8 + size + size % 2)
                chunks.append(position..<end)
                position = end
            }
            return chunks
        }
    }

    /// Where each page is, by its header's lengths (whatever its CRC).
    static func oggPages(_ bytes: [UInt8]) -> [Range<Int>] {
        var pages: [Range<Int>] = [], position = 0
        while position + 27 <= bytes.count, bytes[position..<(position + 4)].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[position + 26])
            guard position + 27 + segments <= bytes.count else { break }
            let end = position + 27 + segments + bytes[(position + 27)..<(position + 27 + segments)].reduce(0) { $0 + Int($1) }
            guard end <= bytes.count else { break }
            pages.append(position..<end)
            position = end
        }
        return pages
    }

    static func setOggCRC(_ bytes: inout [UInt8], pageAt offset: Int) {
        guard let page = oggPages(Array(bytes[offset...])).first else { return }
        bytes.replaceSubrange((offset + 22)..<(offset + 26), with: [0, 0, 0, 0])
        let crc = OggPage.crc32(bytes[(offset + page.lowerBound)..<(offset + page.upperBound)])
        bytes.replaceSubrange((offset + 22)..<(offset + 26), with: (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) })
    }
}
