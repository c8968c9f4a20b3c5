/// Ogg pages' CRCs checked for the search through damage in `OggOpusStream`, each from the CRCs of
/// two prefixes of a window of the file (`CRCArithmetic`) rather than by reading the page.
///
/// A page's header states its length, up to 65,307 bytes, so a run of false page headers (a capture
/// pattern and a plausible header every few hundred bytes) cost the search a pass over up to 64 KiB
/// per candidate: 4 s per MiB of such a run (`hark repair`, release build). Here each byte is read
/// once per window and each candidate costs two products per set bit of its length.
///
/// The window holds the CRC of every prefix of `bytes[base...]` it has reached. Candidates come in
/// increasing order and each lies within one page of the last, so the window moves forward: when a
/// page reaches past its capacity it starts again at that page (at most one page's bytes read twice
/// per three pages of progress); a page before it, which the search never asks, would also start it
/// again, at no cost to the answer.
struct OggCRCWindow {
    /// The most prefixes a window holds: four of the longest pages.
    static let capacity = 4 * 65_536

    private let bytes: UnsafeRawBufferPointer
    private var base = 0
    /// `prefixes[i]` is the CRC of `bytes[base..<(base + i)]`; `prefixes[0]` is 0.
    private var prefixes: [UInt32] = [0]

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Whether `page` (read with `OggPageHeader.header`, so whole within `bytes`) has the CRC its
    /// header states: the same answer as `OggPageHeader.hasMatchingCRC`.
    mutating func crcMatches(_ page: OggPageHeader) -> Bool {
        let range = page.range
        if range.lowerBound < base || range.upperBound - base >= Self.capacity {
            base = range.lowerBound
            prefixes.removeAll(keepingCapacity: true)
            prefixes.append(0)
        }
        prefixes.reserveCapacity(Self.capacity)
        while base + prefixes.count - 1 < range.upperBound {
            prefixes.append(CRCArithmetic.ogg.adding(bytes[base + prefixes.count - 1], to: prefixes[prefixes.count - 1]))
        }
        let arithmetic = CRCArithmetic.ogg
        // The page's register as it lies in the file, its CRC field included.
        let asStored = prefixes[range.upperBound - base] ^ arithmetic.shifted(prefixes[range.lowerBound - base], overZeroBytes: range.count)
        // Ogg's CRC is taken with the field (bytes 22 to 25) as zeros. By linearity that is the
        // register above less what the field's four bytes add: their own CRC carried over the rest
        // of the page.
        var field: UInt32 = 0
        for index in (page.offset + 22)..<(page.offset + 26) { field = arithmetic.adding(bytes[index], to: field) }
        let withFieldZeroed = asStored ^ arithmetic.shifted(field, overZeroBytes: range.count - 26)
        return withFieldZeroed == UInt32(bytes.littleEndian(at: page.offset + 22, bytes: 4))
    }
}
