#if canImport(Glibc)
import Glibc
#endif

/// A file opened for reading and mapped into memory whole, read-only, for the analysers to walk.
///
/// Mapping rather than reading lets a repair look at a multi-gigabyte WAV's header and tail without
/// reading its middle, and walk a FLAC's frames without a copy. The mapping is private and
/// read-only: nothing here can change the file. The descriptor stays open for `RepairWriter`, which
/// copies ranges of it into the repaired file in the kernel (`copy_file_range`).
///
/// A file that shrinks while mapped would raise SIGBUS on access; recordings being written are
/// refused (the recorder holds a lock on them, `FileRepair`). The one writer that cuts the file it
/// came from, `InPlaceRepairWriter`, copies out what it needs before the cut and then reads the
/// mapping no more.
final class MappedFile {
    let path: String
    let descriptor: Int32
    let size: Int
    let mode: mode_t
    private let base: UnsafeMutableRawPointer?

    /// The corresponding C functions are `open`, `fstat` and `mmap`.
    init(path: String) throws(RepairFailure) {
        self.path = path
        // Without blocking: a FIFO (an -o FIFO a killed recording left in the access log) would
        // otherwise hold open() until a writer came, with the stop signals blocked; it is then
        // refused below as not a regular file.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw RepairFailure(.cannotOpen, "cannot open it: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let text = String(cString: strerror(errno))
            close(descriptor)
            throw RepairFailure(.cannotOpen, "cannot read it: \(text)")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw RepairFailure(.cannotOpen, "not a regular file")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        self.descriptor = descriptor
        size = Int(info.st_size)
        mode = info.st_mode & 0o7777
        if size == 0 {
            base = nil
        } else {
            let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0)
            guard let mapped, mapped != MAP_FAILED else {
                let text = String(cString: strerror(errno))
                close(descriptor)
                throw RepairFailure(.cannotOpen, "cannot map it: \(text)")
            }
            base = mapped
        }
    }

    deinit {
        if let base { munmap(base, size) }
        close(descriptor)
    }

    /// The file's bytes. Do not let the pointer escape the closure: it dies with the mapping.
    func withBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: size))
    }
}

/// Reading fixed-width integers out of a byte buffer at any offset.
extension UnsafeRawBufferPointer {
    func bigEndian(at offset: Int, bytes count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + count) { value = value << 8 | UInt64(self[index]) }
        return value
    }

    func littleEndian(at offset: Int, bytes count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (offset..<(offset + count)).reversed() { value = value << 8 | UInt64(self[index]) }
        return value
    }

    func matches(_ text: String, at offset: Int) -> Bool {
        let ascii = Array(text.utf8)
        guard offset >= 0, offset + ascii.count <= count else { return false }
        return ascii.indices.allSatisfy { self[offset + $0] == ascii[$0] }
    }

    /// The offset of the first `pattern` at or after `start` and before `limit`, or nil.
    func firstIndex(of pattern: [UInt8], from start: Int, before limit: Int = .max) -> Int? {
        guard !pattern.isEmpty, start >= 0 else { return nil }
        var index = start
        while index + pattern.count <= count && index < limit {
            if self[index] == pattern[0] && pattern.indices.allSatisfy({ self[index + $0] == pattern[$0] }) { return index }
            index += 1
        }
        return nil
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ value: UInt64, bytes count: Int) {
        for shift in stride(from: 8 * (count - 1), through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func appendLittleEndian(_ value: UInt64, bytes count: Int) {
        for shift in stride(from: 0, to: 8 * count, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func putLittleEndian(_ value: UInt64, bytes count: Int, at offset: Int) {
        for index in 0..<count { self[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * index)) }
    }

    mutating func putBigEndian(_ value: UInt64, bytes count: Int, at offset: Int) {
        for index in 0..<count { self[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * (count - 1 - index))) }
    }
}
