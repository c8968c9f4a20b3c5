#if canImport(Glibc)
import Glibc
#endif

/// Names the files of a recording that is split (`--max-file-time`, SIGUSR1).
///
/// `-o` may hold strftime(3) conversions (`rec-%Y%m%d-%H%M%S.flac`), expanded in local time when
/// each file starts. A name this recording already used, or (for the second file on) one that
/// exists, gets a counter before its extension: `talk.flac`, `talk-2.flac`, `talk-3.flac`. The
/// first file keeps the name the user gave even if it exists, as a single recording always has
/// (it replaces the old file once its first audio comes); a recording added to the library, or named by a
/// pattern with conversions, never replaces one (`CreatedOutput.keepsExisting`).
struct OutputNaming {
    let pattern: String
    private(set) var used: [String] = []

    init(pattern: String) {
        self.pattern = pattern
    }

    /// Whether the pattern has strftime conversions: a '%' that is not half of a "%%" (which
    /// strftime gives back as a literal '%', the same at every time).
    var hasTimeConversions: Bool {
        var characters = pattern.utf8.makeIterator()
        while let character = characters.next() {
            guard character == UInt8(ascii: "%") else { continue }
            guard characters.next() == UInt8(ascii: "%") else { return true }
        }
        return false
    }

    /// The next file's name, for a file starting at `time` (seconds since the epoch).
    mutating func next(at time: Int) -> String {
        // Through strftime whenever there is a '%', so "%%" is a '%' as the user meant.
        let base = pattern.contains("%") ? Self.expand(pattern, at: time) : pattern
        var name = base
        var counter = 2
        while used.contains(name) || (!used.isEmpty && Self.exists(name)) {
            name = Self.numbered(base, counter)
            counter += 1
        }
        used.append(name)
        return name
    }

    /// Gives back a name `next` returned whose file was never made (a sound-activated recording's
    /// first name, taken before any sound), so the next file may have it.
    mutating func forget(_ name: String) {
        used.removeAll { $0 == name }
    }

    /// `path` with "-N" before its extension (the part after the last dot of the file name).
    static func numbered(_ path: String, _ counter: Int) -> String {
        let nameStart = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        if let dot = path[nameStart...].lastIndex(of: "."), dot > nameStart {
            return "\(path[..<dot])-\(counter)\(path[dot...])"
        }
        return "\(path)-\(counter)"
    }

    /// strftime(3) in local time. A conversion that expands to nothing leaves the pattern as it is.
    static func expand(_ pattern: String, at time: Int) -> String {
        var seconds = time_t(time)
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = strftime(&buffer, buffer.count, pattern, &parts)
        guard length > 0 else { return pattern }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
