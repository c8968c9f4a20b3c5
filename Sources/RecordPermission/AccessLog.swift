import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// One recording, as the access log keeps it (an App Privacy Report for the terminal).
public struct AccessLogEntry: Codable, Sendable, Equatable {
    public var start: Date
    public var end: Date
    public var app: String
    public var device: String
    /// e.g. "S16_LE, 2 ch, 48000 Hz, flac"
    public var format: String
    /// A path, or "stdout".
    public var output: String
    public var frames: Int
    /// How consent was obtained: stored, once or prompt.
    public var consent: ConsentSource
    /// How the recording ended: duration, SIGINT, SIGTERM, SIGHUP, device lost, output failed, revoked.
    public var ended: String
    /// Frames dropped because the ring was full (absent in entries of programs that do not say).
    public var framesDropped: Int?
    /// Device overruns, and the frames the device lost in them.
    public var overruns: Int?
    public var framesLostToOverruns: Int?

    public init(start: Date, end: Date, app: String, device: String, format: String, output: String, frames: Int,
                consent: ConsentSource, ended: String, framesDropped: Int? = nil, overruns: Int? = nil,
                framesLostToOverruns: Int? = nil) {
        self.start = start
        self.end = end
        self.app = app
        self.device = device
        self.format = format
        self.output = output
        self.frames = frames
        self.consent = consent
        self.ended = ended
        self.framesDropped = framesDropped
        self.overruns = overruns
        self.framesLostToOverruns = framesLostToOverruns
    }
}

/// The per-user access log: one JSON line per recording in `<state dir>/access-log.jsonl`, mode
/// 0600, appended with `O_APPEND` in a single write so concurrent recorders never interleave lines.
/// When it passes `maxBytes` it is rotated to `access-log.jsonl.1` (one generation kept), so it
/// stays under twice that size.
public struct AccessLog: Sendable {
    public let path: String
    public let maxBytes: Int

    public init(locations: PermissionLocations = .current(), maxBytes: Int = 1 << 20) {
        path = locations.accessLogFile
        self.maxBytes = maxBytes
    }

    /// Appends `entry`. Not real-time safe; called once per recording, after it ended.
    public func append(_ entry: AccessLogEntry) throws(PermissionChangeError) {
        let directory = String(path[..<path.lastIndex(of: "/")!])
        do throws(SecureFile.Problem) {
            try SecureFile.makePrivateDirectory(directory)
        } catch {
            throw PermissionChangeError(message: "the access log directory \(directory) \(error.text)")
        }
        guard var line = try? entry.encodedLine() else {
            throw PermissionChangeError(message: "cannot encode an access log entry")
        }
        line.append(0x0A)
        SecureFile.withExclusiveLock(path + ".lock") {
            var info = stat()
            if lstat(path, &info) == 0, Int(info.st_size) + line.count > maxBytes {
                rename(path, path + ".1")
            }
        }
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PermissionChangeError(message: "cannot write the access log \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        guard written == line.count else {
            throw PermissionChangeError(message: "cannot write the access log \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// All entries, oldest first (the rotated file, then the current one). Unparseable lines are skipped.
    public func entries() -> [AccessLogEntry] {
        [path + ".1", path].flatMap { file -> [AccessLogEntry] in
            guard let bytes = try? SecureFile.readTrusted(file, maxBytes: 2 * maxBytes + 65_536) else { return [] }
            return bytes.split(separator: 0x0A).compactMap { try? JSONDecoder.store.decode(AccessLogEntry.self, from: Data($0)) }
        }
    }
}

extension AccessLogEntry {
    /// The entry as the log stores it: one line of JSON, keys sorted, no newline.
    public var jsonLine: String { (try? encodedLine()).map { String(decoding: $0, as: UTF8.self) } ?? "{}" }

    func encodedLine() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }
}
