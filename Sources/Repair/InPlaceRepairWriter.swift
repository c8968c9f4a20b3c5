#if canImport(Glibc)
import Glibc
#endif

/// Writes a repair into the original file itself, when the repair leaves every kept range of it
/// where it is: the usual repair of a killed recording (a WAV's sizes, a FLAC's STREAMINFO and seek
/// points, an Ogg stream's last page, a torn tail cut off). Then no copy is made: a repair of a
/// 20 GB RF64 archive takes milliseconds and needs no free space, where a copy beside it would take
/// minutes on a file system without shared extents (ext4, tmpfs) and fail on the disk that filled
/// up and killed the recorder.
///
/// Invariant: until the repaired file has checked out, the original can be put back exactly. The
/// bytes a write covers and the tail a cut removes are saved first (`Rollback`, at most
/// `rollbackLimit` bytes: plans that would overwrite more go to `RepairWriter`'s copy), and every
/// failure after the first write restores them. What a crash in the middle leaves is the original
/// with some of its headers already corrected, which the next repair finishes.
struct InPlaceRepairWriter {
    static let rollbackLimit = 16 << 20

    let original: MappedFile
    /// The original's resolved path: the file is reopened there for writing.
    let destination: String
    let writes: [(offset: Int, bytes: [UInt8])]
    let length: Int

    /// Nil when `plan` moves a kept range or overwrites too much to save: a copy is needed.
    init?(original: MappedFile, destination: String, plan: RepairPlan) {
        var writes: [(offset: Int, bytes: [UInt8])] = []
        var position = 0, overwritten = 0
        for segment in plan.segments {
            switch segment {
            case .original(let range):
                guard range.lowerBound == position else { return nil }
            case .bytes(let bytes):
                writes.append((position, bytes))
                overwritten += max(0, min(position + bytes.count, original.size) - position)
            }
            position += segment.count
        }
        guard overwritten + max(0, original.size - position) <= Self.rollbackLimit else { return nil }
        self.original = original
        self.destination = destination
        self.writes = writes
        length = position
    }

    /// Writes the plan into the file, syncs it and checks it with `verify` (nil: good); puts the
    /// original back if anything fails. False, with nothing written, when the file cannot be opened
    /// for writing (its mode): the caller copies instead. The corresponding C functions are `open`,
    /// `pwrite`, `ftruncate` and `fsync`.
    func write(verify: (UnsafeRawBufferPointer) -> String?) throws(RepairFailure) -> Bool {
        // O_NONBLOCK: should the path have become a FIFO since it was read, open fails (ENXIO)
        // rather than waiting for a reader; it means nothing for a regular file.
        let output = open(destination, O_WRONLY | O_CLOEXEC | O_NONBLOCK)
        guard output >= 0 else { return false }
        defer { close(output) }
        var opened = stat(), mapped = stat()
        // The path must still name the file that was analysed (and is locked).
        guard fstat(output, &opened) == 0, fstat(original.descriptor, &mapped) == 0,
              opened.st_dev == mapped.st_dev, opened.st_ino == mapped.st_ino, Int(opened.st_size) == original.size
        else { throw RepairFailure(.ioError, "the file changed while it was checked; nothing changed") }

        let rollback = Rollback(original: original, writes: writes, length: length)
        for write in writes where !write.bytes.withUnsafeBytes({ writeFully($0, to: output, at: write.offset) }) {
            throw rollback.restore(output, after: "cannot write the repair: \(String(cString: strerror(errno)))")
        }
        guard ftruncate(output, off_t(length)) == 0, fsync(output) == 0 else {
            throw rollback.restore(output, after: "cannot write the repair: \(String(cString: strerror(errno)))")
        }
        let problem: String?
        do throws(RepairFailure) {
            problem = try MappedFile(path: destination).withBytes(verify)
        } catch {
            problem = error.message
        }
        if problem == FileRepair.interruptedCheck { throw rollback.restore(output, after: "interrupted", kind: .interrupted) }
        if let problem {
            throw rollback.restore(output, after: "the repaired file did not check out (\(problem))", kind: .verificationFailed)
        }
        return true
    }

    /// The original's bytes that the writes cover and the cut removes, copied out of the mapping
    /// before anything is written (the mapping is private, but pages not yet read would show the
    /// new bytes, and pages past a cut would fault).
    private struct Rollback {
        let size: Int
        let saved: [(offset: Int, bytes: [UInt8])]

        init(original: MappedFile, writes: [(offset: Int, bytes: [UInt8])], length: Int) {
            size = original.size
            // (A write may start at or past the original's end: a pad byte, a longer last page.)
            var ranges = writes.compactMap { write -> Range<Int>? in
                let end = min(write.offset + write.bytes.count, original.size)
                return write.offset < end ? write.offset..<end : nil
            }
            if length < original.size { ranges.append(length..<original.size) }
            saved = original.withBytes { bytes in ranges.map { ($0.lowerBound, Array(bytes[$0])) } }
        }

        /// Puts the original back and returns the failure to report, saying whether it is back.
        func restore(_ output: Int32, after failure: String, kind: RepairFailure.Kind = .ioError) -> RepairFailure {
            var restored = ftruncate(output, off_t(size)) == 0
            for piece in saved where restored {
                restored = piece.bytes.withUnsafeBytes { writeFully($0, to: output, at: piece.offset) }
            }
            restored = restored && fsync(output) == 0
            return RepairFailure(kind, failure + (restored ? "; the original is unchanged" : "; the original could not be put back (\(String(cString: strerror(errno))))"))
        }
    }
}
