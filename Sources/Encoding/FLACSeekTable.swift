import CFLAC

/// A FLAC SEEKTABLE that fills in while hark encodes, for a seekable output.
///
/// The header cannot grow once audio follows it, and rewriting the whole file at the end would
/// double the disk traffic and break the promise that a killed recording decodes. So the space is
/// reserved up front: at init the block holds `capacity` placeholder points (18 bytes each), which
/// libFLAC writes with the other headers. As frames are written, the encoder thread records a point
/// for the frame that holds each multiple of `spacing` (10 s at first) straight into the block's
/// preallocated points. libFLAC keeps a pointer to this block (not a copy), so its `finish()` —
/// which, with seek and tell callbacks, rewrites STREAMINFO and the first SEEKTABLE in place —
/// writes these points too. Points never filled stay placeholders, which the format allows.
///
/// libFLAC can fill a template itself, but only one of sample numbers known in advance
/// (`…_template_append_spaced_points_by_samples` needs the total length), and targets past the
/// end of a stopped recording would be left as non-placeholder points with no offset. Placeholders
/// never match its own fill-in loop (their sample number is the largest there is), so the points
/// here are hark's alone.
///
/// When every point is used, the spacing doubles: every other point is kept (0, 20 s, 40 s, …) and
/// the freed half is filled at the new spacing. A table sized for an hour thus covers two hours at
/// 20 s, four at 40 s, and so on, never growing.
///
/// Invariants: `0 ≤ filled ≤ capacity`; points `0..<filled` are sorted by sample number, unique,
/// and each names a frame whose write completed; points `filled..<capacity` are placeholders.
/// `noteWrite` allocates nothing (it runs once per written frame, on the encoder thread).
final class FLACSeekTable {
    /// Seconds between seek points until the table is full.
    static let initialSpacingSeconds = 10
    /// Points reserved when the length is not known (`-d` not given): one hour at 10 s.
    static let defaultCapacity = 360
    /// At most this many points (12 hours at 10 s, 78 KB), however long `-d` is.
    static let maximumCapacity = 4_320

    /// The SEEKTABLE block handed to `FLAC__stream_encoder_set_metadata`; owned here.
    let block: UnsafeMutablePointer<FLAC__StreamMetadata>
    /// Points reserved; even, so halving keeps exactly every other one.
    let capacity: Int
    /// Points holding a real seek point (the rest are placeholders).
    private(set) var filled = 0
    /// Samples between the targets points are recorded for.
    private(set) var spacing: UInt64
    /// The next sample number a point is wanted for.
    private var nextTarget: UInt64 = 0
    /// Samples per channel in frames written so far.
    private var samplesWritten: UInt64 = 0
    /// Where the first audio frame starts in the output; seek points count bytes from there.
    private var audioOffset: Int?
    /// Where the SEEKTABLE block's 4-byte header starts in the output, once it has been written.
    private(set) var blockOffset: Int?

    /// Reserves points for `expectedSeconds` of audio at 10 s spacing (one hour when unknown),
    /// at most `maximumCapacity`. Returns nil when libFLAC cannot allocate them. Not real-time safe.
    /// The corresponding C functions are `FLAC__metadata_object_new` and
    /// `FLAC__metadata_object_seektable_template_append_placeholders`.
    init?(sampleRate: Int, expectedSeconds: Double?, capacity requested: Int? = nil) {
        let capacity = Self.capacity(expectedSeconds: expectedSeconds, requested: requested)
        guard let block = FLAC__metadata_object_new(FLAC__METADATA_TYPE_SEEKTABLE) else { return nil }
        guard FLAC__metadata_object_seektable_template_append_placeholders(block, UInt32(capacity)) != 0 else {
            FLAC__metadata_object_delete(block)
            return nil
        }
        self.block = block
        self.capacity = capacity
        spacing = UInt64(Self.initialSpacingSeconds * sampleRate)
    }

    deinit { FLAC__metadata_object_delete(block) }

    /// Points for `expectedSeconds` (a target at 0, 10, 20 s… before its end), rounded up to even,
    /// within 2…`maximumCapacity`; `requested` overrides it (tests).
    static func capacity(expectedSeconds: Double?, requested: Int? = nil) -> Int {
        let wanted: Int
        if let requested {
            wanted = requested
        } else if let expectedSeconds, expectedSeconds.isFinite, expectedSeconds > 0 {
            wanted = Int(min((expectedSeconds / Double(initialSpacingSeconds)).rounded(.up), Double(maximumCapacity)))
        } else {
            wanted = defaultCapacity
        }
        let even = (max(wanted, 2) + 1) / 2 * 2
        return min(even, maximumCapacity)
    }

    /// The point storage libFLAC reads in `finish()`: `capacity` points.
    private var points: UnsafeMutablePointer<FLAC__StreamMetadata_SeekPoint> {
        block.pointee.data.seek_table.points
    }

    /// Records a write that completed at `offset` in the output: `frames` samples per channel of
    /// audio, or a metadata write (`frames == 0`) whose first byte is `firstByte`.
    /// Real-time safe: no allocation, no locks.
    func noteWrite(at offset: Int, frames: Int, firstByte: UInt8) {
        guard frames > 0 else {
            // Before the first audio frame, libFLAC writes "fLaC" and then each metadata block in one
            // write, its header first: type in the low 7 bits of byte 0. Later metadata writes are
            // libFLAC's in-place rewrites in finish(), which start mid-block and are not headers.
            if audioOffset == nil, blockOffset == nil, firstByte & 0x7F == UInt8(FLAC__METADATA_TYPE_SEEKTABLE.rawValue) {
                blockOffset = offset
            }
            return
        }
        let start = audioOffset ?? offset
        audioOffset = start
        let firstSample = samplesWritten
        samplesWritten += UInt64(frames)
        // The frame holds the next target when its last sample reaches it.
        guard samplesWritten > nextTarget else { return }
        if filled == capacity { halveDensity() }
        points[filled] = FLAC__StreamMetadata_SeekPoint(
            sample_number: firstSample, stream_offset: UInt64(offset - start), frame_samples: UInt32(frames))
        filled += 1
        // One frame (at most 65535 samples, 4608 with libFLAC's presets) is shorter than the
        // spacing (10 s at ≥ 1000 Hz), so this runs once and point k stays the one for target k.
        while nextTarget < samplesWritten { nextTarget += spacing }
    }

    /// Keeps points 0, 2, 4, … in the first half, turns the second half back into placeholders and
    /// doubles the spacing. The next target stays where it was (`capacity × spacing` =
    /// `capacity / 2 × 2 spacing`), so it lands on the first freed point.
    private func halveDensity() {
        let kept = capacity / 2
        for index in 0..<kept { points[index] = points[2 * index] }
        for index in kept..<capacity { points[index] = Self.placeholder }
        filled = kept
        spacing *= 2
    }

    private static var placeholder: FLAC__StreamMetadata_SeekPoint {
        FLAC__StreamMetadata_SeekPoint(sample_number: FLAC__STREAM_METADATA_SEEKPOINT_PLACEHOLDER,
                                       stream_offset: 0, frame_samples: 0)
    }

    /// The block's body as the format stores it (18 big-endian bytes per point), for writing it in
    /// place after a failure, when libFLAC's `finish()` cannot. Not real-time safe.
    func encodedPoints() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity * 18)
        for index in 0..<capacity {
            let point = points[index]
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: point.sample_number >> UInt64(shift))) }
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: point.stream_offset >> UInt64(shift))) }
            bytes.append(UInt8(truncatingIfNeeded: point.frame_samples >> 8))
            bytes.append(UInt8(truncatingIfNeeded: point.frame_samples))
        }
        return bytes
    }

    /// Where the points start in the output (after the block's 4-byte header), once it is written.
    var pointsOffset: Int? { blockOffset.map { $0 + 4 } }
}
