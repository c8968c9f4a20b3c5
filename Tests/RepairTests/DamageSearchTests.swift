import Encoding
@testable import Repair
import SignalGenerator
import Testing

/// The searches through damage find pages' CRCs and frames' ends from prefix CRCs
/// (`CRCArithmetic`, `OggCRCWindow`, `FLACFrameEndIndex`) instead of reading each candidate. These
/// tests hold them to the answers of the reading they replace, at every offset of mutated files,
/// of runs of false headers and of files that end in zeros.
@Suite struct DamageSearchTests {
    static let random = SplitMix64(seed: 20_261_128)

    @Test func aStretchsCRCFollowsFromTwoPrefixes() {
        var random = Self.random
        let bytes = (0..<6_000).map { _ in UInt8(random.next(below: 256)) }
        let ogg = CRCArithmetic.ogg, flac = CRCArithmetic.flac
        var oggPrefixes: [UInt32] = [0], flacPrefixes: [UInt32] = [0]
        for byte in bytes {
            oggPrefixes.append(ogg.adding(byte, to: oggPrefixes.last!))
            flacPrefixes.append(flac.adding(byte, to: flacPrefixes.last!))
        }
        #expect(oggPrefixes.last == OggPage.crc32(bytes) && flacPrefixes.last == UInt32(Checksums.crc16(bytes)), "the table step is each CRC's own")
        for _ in 0..<300 {
            let a = random.next(below: bytes.count), b = a + random.next(below: bytes.count - a + 1)
            #expect(oggPrefixes[b] ^ ogg.shifted(oggPrefixes[a], overZeroBytes: b - a) == OggPage.crc32(bytes[a..<b]), "\(a)..<\(b)")
            #expect(flacPrefixes[b] ^ flac.shifted(flacPrefixes[a], overZeroBytes: b - a) == UInt32(Checksums.crc16(bytes[a..<b])), "\(a)..<\(b)")
        }
        let inverse = flac.zeroByteInverse(), oggInverse = ogg.zeroByteInverse()
        #expect(flac.product(inverse, 0x100) == 1 && flac.product(0x100, inverse) == 1 && ogg.product(oggInverse, 0x100) == 1)
        #expect(flac.shifted(0x1234, overZeroBytes: 3) == UInt32(Checksums.crc16([0, 0, 0], startingAt: 0x1234)), "a shift is zero bytes added")
    }

    @Test func theCRCWindowJudgesEveryOggPageAsReadingItDoes() throws {
        var mutator = RepairFuzzMutator(random: Self.random)
        let seeds = try RepairFuzzSeed.all().filter { $0.container == .opus }
        var files = seeds.map(\.bytes) + seeds.map { Self.withFalsePages($0.bytes) } + [Self.pagesAmongNoise()]
        for index in 0..<60 {
            var bytes = seeds[index % seeds.count].bytes
            _ = mutator.mutate(&bytes, .opus)
            files.append(bytes)
        }
        var pagesJudged = 0, pagesWhole = 0
        for bytes in files {
            bytes.withUnsafeBytes { bytes in
                var inOrder = OggCRCWindow(bytes)
                var shuffled = OggCRCWindow(bytes)
                var headers: [OggPageHeader] = []
                for offset in 0..<bytes.count where bytes[offset] == UInt8(ascii: "O") {
                    guard let page = OggPageHeader.header(bytes, at: offset) else { continue }
                    headers.append(page)
                    let read = page.hasMatchingCRC(in: bytes)
                    #expect(inOrder.crcMatches(page) == read, "the page at \(offset) of a file of \(bytes.count) bytes")
                    pagesJudged += 1
                    if read { pagesWhole += 1 }
                }
                var random = Self.random
                for _ in 0..<min(50, headers.count) {
                    let page = headers[random.next(below: headers.count)]
                    #expect(shuffled.crcMatches(page) == page.hasMatchingCRC(in: bytes), "out of order, the page at \(page.offset)")
                }
            }
        }
        #expect(pagesWhole > 100 && pagesJudged > pagesWhole + 500, "whole pages and false ones both judged: \(pagesWhole) of \(pagesJudged)")
    }

    @Test func theEndIndexFindsEveryFrameThatReadingFinds() throws {
        var mutator = RepairFuzzMutator(random: Self.random)
        var random = Self.random
        let seeds = try RepairFuzzSeed.all().filter { $0.container == .flac }
        let stream = FLACFrameTests.streamInfo(channels: 2, bits: 16, blockSize: 65_535)
        let zeroCRCEnding = FLACFrameEndTests.unfinishedStream(frames: 4, lastBlockSize: FLACFrameEndTests.zeroCRCBlockSize, stream: stream)
        var files = seeds.map(\.bytes) + seeds.map { Self.withFalseFrameHeaders($0.bytes) }
            + [zeroCRCEnding, zeroCRCEnding + [UInt8](repeating: 0, count: 300), zeroCRCEnding + [0xFF, 0xF8]]
        for seed in seeds {
            // Cut inside a frame, zeros after it (what a file system leaves after a crash).
            let cut = seed.bytes.count / 2 + random.next(below: seed.bytes.count / 2)
            files.append(Array(seed.bytes[..<cut]) + [UInt8](repeating: 0, count: random.next(below: 5_000)))
        }
        for index in 0..<30 {
            var bytes = seeds[index % seeds.count].bytes
            _ = mutator.mutate(&bytes, .flac)
            files.append(bytes)
        }
        var framesFound = 0, candidates = 0
        for bytes in files {
            bytes.withUnsafeBytes { bytes in
                guard let metadata = try? FLACMetadata(bytes) else { return }
                var zeroTailStart = bytes.count
                while zeroTailStart > metadata.audioStart && bytes[zeroTailStart - 1] == 0 { zeroTailStart -= 1 }
                let walker = FLACFrameWalk.Walker(bytes: bytes, end: bytes.count, zeroTailStart: zeroTailStart, stream: metadata.streamInfo,
                                                  header: UnsafeRawBufferPointer(rebasing: bytes[..<metadata.audioStart]))
                let inOrder = FLACFrameEndIndex(bytes: bytes, end: bytes.count, zeroTailStart: zeroTailStart, stream: metadata.streamInfo)
                var headers: [Int] = []
                // Both ways give nil at once where no 0xFF starts a header.
                for offset in metadata.audioStart..<bytes.count where bytes[offset] == 0xFF {
                    let read = walker.frame(at: offset, isVariable: nil)
                    #expect(walker.frame(at: offset, isVariable: nil, ends: inOrder) == read,
                            "at \(offset) of a file of \(bytes.count) bytes, its zeros from \(zeroTailStart)")
                    if read != nil { framesFound += 1 }
                    if FLACFrameHeader.parse(bytes, at: offset, stream: metadata.streamInfo) != nil { headers.append(offset) }
                }
                candidates += headers.count
                let shuffled = FLACFrameEndIndex(bytes: bytes, end: bytes.count, zeroTailStart: zeroTailStart, stream: metadata.streamInfo)
                for _ in 0..<min(8, headers.count) {  // each a pass over a new window
                    let offset = headers[random.next(below: headers.count)]
                    #expect(walker.frame(at: offset, isVariable: nil, ends: shuffled) == walker.frame(at: offset, isVariable: nil), "out of order, at \(offset)")
                }
            }
        }
        #expect(framesFound > 100 && candidates > framesFound + 500, "frames and false headers both searched: \(framesFound) frames, \(candidates) headers")
    }

    /// 768 KiB of noise with a page every few KiB, of up to 60 KiB: later pages overwrite earlier
    /// pages' ends, so some are whole and some fail their CRC; the window starts again several
    /// times on its way through (`OggCRCWindow.capacity`).
    static func pagesAmongNoise() -> [UInt8] {
        var random = SplitMix64(seed: 7)
        var bytes = (0..<786_432).map { _ in UInt8(random.next(below: 256)) }
        var offset = 0
        while true {
            let length = random.next(below: 60_000)
            let page = OggPageHeader.build(flags: 0, granule: 960, serial: 1, sequence: 2, lacing: OggPageHeader.lacing(forPacketOf: length),
                                           body: Array(bytes[offset..<min(bytes.count, offset + length)]))
            guard offset + page.count <= bytes.count else { return bytes }
            bytes.replaceSubrange(offset..<(offset + page.count), with: page)
            offset += 1 + random.next(below: 6_000)
        }
    }

    /// `bytes` with 4 KiB of false pages in its middle: one page's header repeated, each claiming
    /// 2 KiB (as the seeds are short; claiming 64 KiB made the search slow).
    static func withFalsePages(_ bytes: [UInt8]) -> [UInt8] {
        let pages = RepairFuzzMutator.oggPages(bytes)
        let copied = pages[min(2, pages.count - 1)].lowerBound, insertion = pages[min(3, pages.count - 1)].lowerBound
        let header = Array(bytes[copied..<(copied + 26)]) + [8] + [UInt8](repeating: 255, count: 8)
        let run = (0..<(4_096 / header.count)).flatMap { _ in header }
        return Array(bytes[..<insertion]) + run + Array(bytes[insertion...])
    }

    /// `bytes` with 768 bytes of false frames before a frame in its middle: its first frame's header
    /// repeated.
    static func withFalseFrameHeaders(_ bytes: [UInt8]) -> [UInt8] {
        let frames = bytes.withUnsafeBytes { buffer in
            (try? FLACMetadata(buffer)).flatMap { try? FLACFrameWalk(buffer, metadata: $0).frames } ?? []
        }
        guard let first = frames.first else { return bytes }
        let header = bytes[first.range.lowerBound..<(first.range.lowerBound + first.header.length)]
        let run = (0..<(768 / header.count)).flatMap { _ in header }
        let middle = frames[frames.count / 2].range.lowerBound
        return Array(bytes[..<middle]) + run + Array(bytes[middle...])
    }
}
