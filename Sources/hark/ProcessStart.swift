import Recorder
#if canImport(Glibc)
import Glibc
#endif

/// What hark makes sure of before anything else runs: the three standard descriptors exist, and
/// the command line is text hark can hold without changing it.
enum ProcessStart {
    /// Opens `/dev/null` on each of descriptors 0, 1 and 2 that the caller left closed (`2>&-`).
    /// Otherwise the first file hark opens takes that number, and what was meant for the closed
    /// stream (notices on stderr, audio for `-o -` on stdout) would be written into a recording.
    /// Read-only, so writing to a stream the caller closed still fails (`-o -` with stdout closed
    /// ends with "Bad file descriptor", as before) instead of vanishing into `/dev/null`.
    static func reserveStandardDescriptors() {
        for descriptor in Int32(0)...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            // open() returns the lowest free number: this one, as the lower ones are open by now.
            let opened = open("/dev/null", O_RDONLY)
            if opened >= 0 && opened != descriptor { close(opened) }
        }
    }

    /// "output" or "error" when `path` names standard output or error through the descriptor
    /// links (`/dev/stdout`, `/dev/fd/2`, `/proc/self/fd/1`, or a link to one) and that stream is
    /// closed: opened read-only, as `reserveStandardDescriptors` leaves a closed one. Such a name
    /// would reach the `/dev/null` standing in for it, and the recording vanish there.
    static func closedStandardStream(named path: String) -> String? {
        guard let descriptor = descriptorNamed(by: path), descriptor == 1 || descriptor == 2 else { return nil }
        let flags = fcntl(descriptor, F_GETFL)
        return flags == -1 || flags & O_ACCMODE == O_RDONLY ? (descriptor == 1 ? "output" : "error") : nil
    }

    /// The descriptor `path` names (`/dev/fd/3`, `/proc/self/fd/3`, …) when it is above the
    /// standard three and not open. Asked before hark opens anything of its own: its first pipe
    /// would take that number, and the recording went into hark's own pipe to the desktop switch's
    /// helper, where it never ended (`-d` and Ctrl-C held up by the full pipe).
    static func closedDescriptor(named path: String) -> Int32? {
        guard let descriptor = descriptorNamed(by: path), descriptor > 2 else { return nil }
        return fcntl(descriptor, F_GETFD) == -1 && errno == EBADF ? descriptor : nil
    }

    /// The descriptor `path` names through `/dev/fd/N` or `/proc/{self,thread-self,PID}/fd/N`,
    /// its symbolic links followed (`/dev/stdout` is one) up to the descriptor's own; nil for any
    /// other file.
    private static func descriptorNamed(by path: String) -> Int32? {
        let prefixes = ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/\(getpid())/fd/"]
        var current = path
        for _ in 0..<8 {
            for prefix in prefixes where current.hasPrefix(prefix) { return Int32(current.dropFirst(prefix.count)) }
            guard let target = OutputPath.linkTarget(current) else { return nil }
            current = target
        }
        return nil
    }

    /// The first argument that is not valid UTF-8, shown with its stray bytes as `\xNN` (and a
    /// backslash as `\\`, so the two cannot be mistaken), or nil. Swift reads such an argument with
    /// each stray byte replaced by U+FFFD, so a file name would silently become another file's
    /// (one that may exist, and would be overwritten).
    static func argumentThatIsNotUTF8() -> String? {
        guard CommandLine.argc > 1 else { return nil }  // argc can be 0 (an execve with no argv)
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self),
                                            count: strlen(argument))
            if String(validating: bytes, as: UTF8.self) == nil { return escaped(bytes) }
        }
        return nil
    }

    /// `bytes` as text, each byte that is not part of valid UTF-8 written `\xNN`, and the rest as
    /// `shownOnTerminal` shows it (so a `\xNN` in the argument itself is told apart).
    private static func escaped(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var text = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var position = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                text += String(scalar).shownOnTerminal
                position += encoded.count
            case .error(let length):
                for byte in bytes[position..<position + length] { text += "\\x" + String(byte, radix: 16, uppercase: false).leftPadded(to: 2) }
                position += length
            case .emptyInput:
                return text
            }
        }
    }
}
