#if canImport(Glibc)
import Glibc
#endif

/// What names an output file, beyond its spelling: the file a path reaches once its symbolic
/// links are followed, so two `-o` that name one file are told apart from two files.
public enum OutputPath {
    /// `path` with a symbolic link as its last component followed, and the link's target's, up to
    /// 40 links as the kernel follows (a relative target is taken from the link's directory). The
    /// file need not exist, nor the link's target: a dangling link gives where it points.
    public static func followingLinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            guard let target = linkTarget(current) else { break }
            current = target
        }
        return current
    }

    /// Where the symbolic link `path` points (a relative target taken from the link's
    /// directory), or nil when `path` is not a link. One step: the target may be a link too.
    public static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, Int(PATH_MAX))
        guard length > 0 else { return nil }
        let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.hasPrefix("/") ? target : directory(of: path) + target
    }

    /// Whether `path` is a name of this process's standard output: `/dev/stdout`, `/dev/fd/1`,
    /// `/proc/self/fd/1` (or `thread-self`, or this process's number), or a symbolic link that
    /// leads to one of them. Such an output is standard output, as `-o -` is: opened by its name it
    /// reaches whatever descriptor 1 is, and when the shell redirected that to a file, hark made a
    /// new file under the redirected file's name (where it replaced the one the shell had opened)
    /// and then warned that it had been moved; beside `-o -` it was a second stream on one pipe.
    /// Looked at by spelling, link by link: the last link, descriptor 1 itself, reads as the name
    /// of what it is open on, which says nothing about whose descriptor it is.
    public static func namesStandardOutput(_ path: String) -> Bool {
        isName(path, ofDescriptor: 1, device: "/dev/stdout")
    }

    /// Whether `path` is a name of this process's standard error (`/dev/stderr`, `/dev/fd/2`, …),
    /// where hark writes its messages: an output there would be a stream with lines of text in it.
    public static func namesStandardError(_ path: String) -> Bool {
        isName(path, ofDescriptor: 2, device: "/dev/stderr")
    }

    /// Whether `path`, or a link it leads to, is spelled as one of this process's names for its
    /// `descriptor` (`device` is /dev's own).
    private static func isName(_ path: String, ofDescriptor descriptor: Int, device: String) -> Bool {
        let names: Set = [device, "/dev/fd/\(descriptor)", "/proc/self/fd/\(descriptor)", "/proc/thread-self/fd/\(descriptor)",
                          "/proc/\(getpid())/fd/\(descriptor)"]
        var current = path
        for _ in 0..<40 {
            if names.contains(current) { return true }
            guard let target = linkTarget(current) else { return false }
            current = target
        }
        return false
    }

    /// The file `path` names, as one string for every way of spelling it: its links followed, its
    /// directory absolute with that directory's links resolved (`realpath`). A directory that does
    /// not exist is left as written (the output cannot be created there anyway).
    public static func identity(_ path: String) -> String {
        let target = followingLinks(path)
        return inResolvedDirectory(target) ?? target
    }

    /// `path` absolute, one way however it was spelled (`//`, `..`, a relative path, a link to a
    /// directory): its directory through `realpath`, its own name as given (a link named as the
    /// output is where the file was made). For the access log, which `hark list` matches against
    /// the library folder. A directory that cannot be resolved is joined to the working directory
    /// as written.
    public static func canonical(_ path: String) -> String {
        if let resolved = inResolvedDirectory(path) { return resolved }
        guard !path.hasPrefix("/"), let workingDirectory = getcwd(nil, 0) else { return path }
        defer { free(workingDirectory) }
        return String(cString: workingDirectory) + "/" + path
    }

    /// `path`'s name in its directory as `realpath` resolves it; nil when the directory does not
    /// resolve (it does not exist, or cannot be searched).
    private static func inResolvedDirectory(_ path: String) -> String? {
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let directoryPath = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard let resolved = realpath(directoryPath, nil) else { return nil }
        defer { free(resolved) }
        let directory = String(cString: resolved)
        return (directory == "/" ? "" : directory) + "/" + name
    }

    /// The directory part of `path` with its trailing slash ("" for a bare name).
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[...slash])
    }
}
