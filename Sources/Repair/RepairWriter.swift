import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Writes a repair that `InPlaceRepairWriter` does not (one that moves what it keeps, or with
/// `--keep`): the plan into a temporary file beside the original, synced, checked by decoding, then
/// renamed over the original, so the original is replaced only by a file known to be good, and
/// never left half-written. With `keep`, the original stays as `NAME.orig` (a hard link made before
/// the rename, so there is no moment with neither).
///
/// Ranges kept from the original are copied in the kernel (`copy_file_range`), data regions only:
/// a hole in the original stays a hole, so a sparse file does not grow on disk.
struct RepairWriter {
    let original: MappedFile
    /// The path the repaired file replaces (symbolic links resolved).
    let destination: String
    /// Checked between copies; true abandons the repair (a stop signal is pending).
    let shouldStop: () -> Bool

    /// Writes `plan`, checks it with `verify` (nil: good; else why not), and renames it into place.
    /// Returns the backup's path when `keep`. The corresponding C functions are `mkostemp`,
    /// `copy_file_range`, `fsync`, `link` and `rename`.
    func write(_ plan: RepairPlan, keep: Bool, verify: (UnsafeRawBufferPointer) -> String?) throws(RepairFailure) -> String? {
        let slash = destination.lastIndex(of: "/")!
        let directory = String(destination[..<slash]).isEmpty ? "/" : String(destination[..<slash])
        let name = String(destination[destination.index(after: slash)...])
        let hiddenName = "\(directory)/.\(name).repair-XXXXXX"
        // The copy has no name while it is written and checked (O_TMPFILE), so a repair killed
        // then (SIGKILL, a power cut) leaves nothing behind; it gets a hidden name only for the
        // rename. A file system without O_TMPFILE gets the hidden name from the start.
        var output = open(directory, hark_open_tmpfile | O_RDWR | O_CLOEXEC, 0o600)
        var temporary: String?
        if output < 0 && [EOPNOTSUPP, EISDIR, EINVAL].contains(errno) {
            var template = Array(hiddenName.utf8CString)
            output = mkstemp(&template)
            if output >= 0 {
                _ = fcntl(output, F_SETFD, FD_CLOEXEC)
                temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        guard output >= 0 else {
            throw RepairFailure(.cannotCreate, "cannot create a temporary file in \(directory): \(String(cString: strerror(errno)))")
        }
        var renamed = false
        defer {
            close(output)
            if !renamed, let temporary { unlink(temporary) }
        }
        var position = 0
        for segment in plan.segments {
            switch segment {
            case .bytes(let bytes):
                if let failure = bytes.withUnsafeBytes({ writeAll($0, to: output, at: position) }) { throw failure }
            case .original(let range):
                try copy(range, to: output, at: position)
            }
            position += segment.count
            if shouldStop() { throw RepairFailure(.interrupted, "interrupted; the original is unchanged") }
        }
        guard ftruncate(output, off_t(position)) == 0, fsync(output) == 0 else {
            throw RepairFailure(.ioError, "cannot write the repaired file: \(String(cString: strerror(errno))); the original is unchanged")
        }
        let written = try MappedFile(path: temporary ?? "/proc/self/fd/\(output)")
        if let problem = written.withBytes(verify) {
            if problem == FileRepair.interruptedCheck { throw RepairFailure(.interrupted, "interrupted; the original is unchanged") }
            throw RepairFailure(.verificationFailed, "the repaired file did not check out (\(problem)); the original is unchanged")
        }
        _ = fchmod(output, original.mode)
        var info = stat()
        if geteuid() == 0, fstat(original.descriptor, &info) == 0 { _ = fchown(output, info.st_uid, info.st_gid) }
        if temporary == nil { temporary = try giveHiddenName(output, like: hiddenName) }
        var backup: String?
        if keep {
            var candidate = destination + ".orig"
            var counter = 2
            while link(destination, candidate) != 0 {
                guard errno == EEXIST else {
                    throw RepairFailure(.ioError, "cannot keep the original as \(candidate): \(String(cString: strerror(errno))); nothing changed")
                }
                candidate = "\(destination).orig.\(counter)"
                counter += 1
            }
            backup = candidate
        }
        guard rename(temporary!, destination) == 0 else {
            let text = String(cString: strerror(errno))
            if let backup { unlink(backup) }
            throw RepairFailure(.ioError, "cannot replace the original: \(text); the original is unchanged")
        }
        renamed = true
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 { _ = fsync(directoryDescriptor); close(directoryDescriptor) }
        return backup
    }

    /// Gives the unnamed file `output` a hidden name made from `pattern` (its X's random), through
    /// /proc/self/fd (`linkat` with AT_EMPTY_PATH needs a capability), for the rename.
    private func giveHiddenName(_ output: Int32, like pattern: String) throws(RepairFailure) -> String {
        let stem = String(pattern.dropLast(6))
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        for _ in 0..<100 {
            let candidate = stem + String((0..<6).map { _ in letters.randomElement()! })
            if linkat(AT_FDCWD, "/proc/self/fd/\(output)", AT_FDCWD, candidate, AT_SYMLINK_FOLLOW) == 0 { return candidate }
            guard errno == EEXIST else { break }
        }
        throw RepairFailure(.cannotCreate, "cannot name the repaired file beside the original: \(String(cString: strerror(errno))); the original is unchanged")
    }

    /// Nil when every byte was written.
    private func writeAll(_ bytes: UnsafeRawBufferPointer, to output: Int32, at offset: Int) -> RepairFailure? {
        writeFully(bytes, to: output, at: offset) ? nil
            : RepairFailure(.ioError, "cannot write the repaired file: \(String(cString: strerror(errno))); the original is unchanged")
    }

    /// Copies the original's `range` to `offset` in `output`, data regions only.
    private func copy(_ range: Range<Int>, to output: Int32, at offset: Int) throws(RepairFailure) {
        var position = range.lowerBound
        while position < range.upperBound {
            let dataStart = lseek(original.descriptor, off_t(position), hark_seek_data)
            if dataStart < 0 && errno == ENXIO { return }  // the rest is a hole
            let start = dataStart < 0 ? position : Int(dataStart)  // no SEEK_DATA: all data
            guard start < range.upperBound else { return }
            let holeStart = dataStart < 0 ? range.upperBound : Int(lseek(original.descriptor, off_t(start), hark_seek_hole))
            let end = min(range.upperBound, holeStart > start ? holeStart : range.upperBound)
            try copyData(start..<end, to: output, at: offset + start - range.lowerBound)
            position = end
            if shouldStop() { throw RepairFailure(.interrupted, "interrupted; the original is unchanged") }
        }
    }

    private func copyData(_ range: Range<Int>, to output: Int32, at offset: Int) throws(RepairFailure) {
        var inputOffset = __off64_t(range.lowerBound), outputOffset = __off64_t(offset)
        while inputOffset < range.upperBound {
            let chunk = min(range.upperBound - Int(inputOffset), 64 << 20)
            let copied = copy_file_range(original.descriptor, &inputOffset, output, &outputOffset, chunk, 0)
            if copied > 0 { continue }
            if copied < 0 && errno == EINTR { continue }
            if copied < 0 && [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP].contains(errno) {
                // Not supported between these files: copy through the mapping instead.
                let start = Int(inputOffset)
                let failure = original.withBytes { bytes in
                    writeAll(UnsafeRawBufferPointer(rebasing: bytes[start..<range.upperBound]), to: output, at: Int(outputOffset))
                }
                if let failure { throw failure }
                return
            }
            throw RepairFailure(.ioError, "cannot write the repaired file: \(copied < 0 ? String(cString: strerror(errno)) : "the original got shorter"); the original is unchanged")
        }
    }
}

/// Writes all of `bytes` at `offset` (`pwrite`, retried after a signal and a short write); false
/// with `errno` set when it cannot.
func writeFully(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, at offset: Int) -> Bool {
    var done = 0
    while done < bytes.count {
        let result = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else { return false }
        done += result
    }
    return true
}
