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
    /// Bytes written so far.
    public private(set) var bytesWritten: Int = 0
    /// The errno of the first failed write or seek; nothing is written after it.
    public private(set) var failure: Int32?
    private var position: Int = 0

    /// Wraps an open descriptor; the sink does not close it.
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        var info = stat()
        let isRegular = fstat(fileDescriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        let appends = (fcntl(fileDescriptor, F_GETFL) & O_APPEND) != 0
        isSeekable = isRegular && !appends && lseek(fileDescriptor, 0, SEEK_CUR) >= 0
        if isSeekable { position = Int(lseek(fileDescriptor, 0, SEEK_CUR)) }
    }

    /// Writes all of `bytes`, retrying after EINTR and short writes. Returns false on failure.
    /// The corresponding C function is `write`.
    @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard failure == nil else { return false }
        var offset = 0
        while offset < bytes.count {
            let result = Glibc.write(fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                failure = errno
                return false
            }
            offset += result
        }
        position += bytes.count
        bytesWritten = max(bytesWritten, position)
        return true
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
