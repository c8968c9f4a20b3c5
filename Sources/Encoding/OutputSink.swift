#if canImport(Glibc)
import Glibc
#endif

/// Where encoded bytes go: a file or standard output, as a file descriptor.
///
/// Writes go straight to the descriptor (no user-space buffer), so every encoded frame reaches the
/// kernel at once and a killed recorder loses nothing already encoded. A failed write is recorded
/// (`failure`) rather than thrown, because it is reported from inside a C callback; the encoder
/// checks it after every call into its library.
public final class OutputSink {
    public let fileDescriptor: Int32
    /// Whether the encoder may seek back to rewrite headers: a regular file not opened for append.
    public let isSeekable: Bool
    /// Bytes written so far: from where the descriptor stood when the sink was made (standard
    /// output redirected to a file may hold another program's output before hark's).
    public var bytesWritten: Int { furthest - startOffset }
    /// Where the descriptor stood at the start, and the furthest offset a complete write reached.
    private let startOffset: Int
    private var furthest: Int
    /// The errno of the first failed write or seek; nothing is written after it.
    public private(set) var failure: Int32?
    /// Audio frames carried by writes that completed (for codecs that say, as libFLAC does).
    public private(set) var framesInCompleteWrites = 0
    /// Writes that completed (libopusenc writes one Ogg page per write).
    public private(set) var completeWrites = 0
    /// Where the last complete write ended: a failed write advances nothing.
    private var position: Int = 0
    /// Where the last complete write began (libopusenc's last whole page, after a failure).
    public private(set) var lastCompleteWriteOffset = 0
    /// Bytes of the failed write that the descriptor took before it failed: a short write that
    /// filled the disk's last blocks or reached the file-size limit, then the error.
    public private(set) var bytesOfFailedWrite = 0

    /// Wraps an open descriptor; the sink does not close it.
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        var info = stat()
        let isRegular = fstat(fileDescriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        let appends = (fcntl(fileDescriptor, F_GETFL) & O_APPEND) != 0
        isSeekable = isRegular && !appends && lseek(fileDescriptor, 0, SEEK_CUR) >= 0
        if isSeekable { position = Int(lseek(fileDescriptor, 0, SEEK_CUR)) }
        startOffset = position
        furthest = position
        lastCompleteWriteOffset = position
    }

    /// Writes all of `bytes`, retrying after EINTR and short writes. Returns false on failure.
    /// The corresponding C function is `write`.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer, frames: Int = 0) -> Bool {
        guard failure == nil else { return false }
        var offset = 0
        while offset < bytes.count {
            let result = Glibc.write(fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                failure = errno
                bytesOfFailedWrite = offset
                return false
            }
            offset += result
        }
        lastCompleteWriteOffset = position
        position += bytes.count
        furthest = max(furthest, position)
        framesInCompleteWrites += frames
        completeWrites += 1
        return true
    }

    /// After a failed write, cuts a seekable file back to the end of the last complete write, so no
    /// torn frame or page is left at its end. Frees space rather than needing it. Returns whether
    /// the file now ends there. The corresponding C function is `ftruncate`.
    public func truncateToLastCompleteWrite() -> Bool {
        guard isSeekable else { return false }
        while ftruncate(fileDescriptor, off_t(position)) != 0 {
            if errno != EINTR { return false }
        }
        furthest = position
        return true
    }

    /// After a failed write of whole audio frames (raw samples, a WAV's data), keeps the frames of
    /// it that reached the file before it failed and cuts the torn one off, so a disk that filled
    /// or a size limit reached in the middle of a write costs no frame that fitted (the write of
    /// half a second or more that found the limit was cut back whole, and a raw file on a nearly
    /// full disk could be left empty). Returns the frames kept, or nil when the file cannot be cut.
    /// The corresponding C function is `ftruncate`.
    /// `evenAfter`: bytes of the same chunk before the failed write, when the chunk's size must
    /// stay even (RIFF pads an odd one with a byte the full disk has no room for): a frame of odd
    /// size fewer is kept then.
    public func truncateToWholeFramesOfFailedWrite(bytesPerFrame: Int, evenAfter: Int? = nil) -> Int? {
        guard isSeekable, bytesPerFrame > 0 else { return nil }
        var keptFrames = bytesOfFailedWrite / bytesPerFrame
        if let evenAfter, keptFrames > 0, (evenAfter + keptFrames * bytesPerFrame) % 2 == 1 { keptFrames -= 1 }
        let end = position + keptFrames * bytesPerFrame
        while ftruncate(fileDescriptor, off_t(end)) != 0 {
            if errno != EINTR { return nil }
        }
        // The kept part counts as a complete write of its own.
        if keptFrames > 0 {
            lastCompleteWriteOffset = position
            position = end
            framesInCompleteWrites += keptFrames
            completeWrites += 1
        }
        bytesOfFailedWrite = 0
        furthest = position
        return keptFrames
    }

    /// Reads `count` bytes at `offset` of a seekable file, without moving the write position.
    /// A descriptor open for writing only (standard output redirected to a file by the shell's
    /// `>`) is read through the file it is open on, opened again read-only: a salvage reads back
    /// what it patches (FLAC's STREAMINFO byte, Ogg Opus's last page), and found nothing there, so
    /// such a file kept a zero length or lacked its end-of-stream flag. Not for the hot path.
    /// The corresponding C functions are `pread` and `open`.
    public func read(at offset: Int, count: Int) -> [UInt8]? {
        guard isSeekable else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        var result = bytes.withUnsafeMutableBytes { pread(fileDescriptor, $0.baseAddress!, count, off_t(offset)) }
        if result < 0 && errno == EBADF {
            let readable = open("/proc/self/fd/\(fileDescriptor)", O_RDONLY | O_CLOEXEC)
            guard readable >= 0 else { return nil }
            defer { close(readable) }
            result = bytes.withUnsafeMutableBytes { pread(readable, $0.baseAddress!, count, off_t(offset)) }
        }
        return result == count ? bytes : nil
    }

    /// Overwrites `bytes` at `offset` of a seekable file in place (no new space needed), even after a
    /// failed write, to finish a header. The corresponding C function is `pwrite`.
    public func overwrite(_ bytes: [UInt8], at offset: Int) -> Bool {
        guard isSeekable, offset + bytes.count <= position else { return false }
        return bytes.withUnsafeBytes { pwrite(fileDescriptor, $0.baseAddress!, $0.count, off_t(offset)) } == bytes.count
    }

    /// Moves the write position (seekable sinks only). The corresponding C function is `lseek`.
    public func seek(to offset: Int) -> Bool {
        guard isSeekable, failure == nil else { return false }
        guard lseek(fileDescriptor, off_t(offset), SEEK_SET) >= 0 else {
            failure = errno
            return false
        }
        position = offset
        return true
    }

    /// The current write position.
    public var currentOffset: Int { position }
}
