#if canImport(Glibc)
import Glibc
#endif

/// Plain words for the errno values a recording's output can fail with.
public enum OutputErrorText {
    public static func describe(errno code: Int32) -> String {
        switch code {
        case ENOSPC: "the disk is full"
        case EFBIG: "the file is too large (file size limit reached)"
        case EPIPE: "the reader closed the pipe"
        case EDQUOT: "the disk quota is exhausted"
        default: String(cString: strerror(code))
        }
    }
}
