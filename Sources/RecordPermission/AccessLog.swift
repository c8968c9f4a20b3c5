#if canImport(Glibc)
import Glibc
#endif

/// One recording, as the access log keeps it (an App Privacy Report for the terminal).
public struct AccessLogEntry: Sendable, Equatable {
    public var start: WallClockTime
    public var end: WallClockTime
    public var app: String
    public var device: String
    /// e.g. "S16_LE, 2 ch, 48000 Hz, flac"
    public var format: String
    /// A path, or "stdout".
    public var output: String
    public var frames: Int
    /// How consent was obtained: stored, once or prompt.
    public var consent: ConsentSource
    /// What was recorded: the microphone, or the system's audio (a monitor source). Lines written
    /// before system audio existed have no such key and mean the microphone.
    public var resource: PermissionResource
    /// How the recording ended: duration, SIGINT, SIGTERM, SIGHUP, SIGQUIT, device lost, output failed, revoked.
    public var ended: String
    /// Frames dropped because the ring was full (absent in entries of programs that do not say).
    public var framesDropped: Int?
    /// Of those, the frames replaced by silence (`--pad-overruns`); absent when not padding, and
    /// in lines written before drops were padded.
    public var framesDroppedPadded: Int?
    /// Device overruns, and the frames the device lost in them.
    public var overruns: Int?
    public var framesLostToOverruns: Int?
    /// Of those, the frames replaced by silence (`--pad-overruns`); absent when not padding.
    public var framesPadded: Int?
    /// The recording's id, as its `RecordingStart` line gave it (absent in older lines): how an
    /// entry says that the recording it started has ended.
    public var recordingID: String?
    /// The first sample's wall-clock time, to the microsecond, from the device's timestamps.
    public var firstSample: WallClockTime?
    /// The device clock's drift against the system clock, in parts per million.
    public var clockDriftPPM: Double?
    /// For a segment of a sound-activated recording, its number from 1 (the recording's own entry,
    /// which covers the whole time the microphone was open, has none). A segment's entry does not
    /// end its recording.
    public var segment: Int?
    /// The recording's loudness (EBU R128), by key: `loudnessLUFS`, `loudnessRangeLU`,
    /// `truePeakDBTP`, `samplePeakDBFS`; a figure there is none of (silence) is left out.
    public var loudness: [String: Double] = [:]
    /// True when the recording was saved to the recordings library (hark's own name there, no
    /// `-o`); absent in other entries and in lines written before the key existed, which `hark
    /// list` judges by their path. Kept so a library that moved (another `XDG_MUSIC_DIR`) still
    /// lists what was saved to it before.
    public var savedToLibrary = false
    /// The keys `loudness` may hold.
    public static let loudnessKeys = ["loudnessLUFS", "loudnessRangeLU", "truePeakDBTP", "samplePeakDBFS"]

    public init(start: WallClockTime, end: WallClockTime, app: String, device: String, format: String, output: String,
                frames: Int, consent: ConsentSource, resource: PermissionResource = .microphone, ended: String,
                framesDropped: Int? = nil, overruns: Int? = nil, framesLostToOverruns: Int? = nil, framesPadded: Int? = nil, recordingID: String? = nil) {
        self.start = start
        self.end = end
        self.app = app
        self.device = device
        self.format = format
        self.output = output
        self.frames = frames
        self.consent = consent
        self.resource = resource
        self.ended = ended
        self.framesDropped = framesDropped
        self.overruns = overruns
        self.framesLostToOverruns = framesLostToOverruns
        self.framesPadded = framesPadded
        self.recordingID = recordingID
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
        guard let line = entry.encodedLine() else {
            throw PermissionChangeError(message: "cannot encode an access log entry")
        }
        try appendLine(line)
    }

    /// Appends one line of JSON (without its newline): an entry, or an event of a recording's
    /// life (`RecordingStart`).
    func appendLine(_ json: [UInt8]) throws(PermissionChangeError) {
        do throws(SecureFile.Problem) {
            try SecureFile.makePrivateDirectory(directory)
        } catch {
            throw PermissionChangeError(message: "the access log directory \(directory) \(error.text)")
        }
        var line = json
        line.append(0x0A)
        SecureFile.withExclusiveLock(path + ".lock") {
            var info = stat()
            if lstat(path, &info) == 0, Int(info.st_size) + line.count > maxBytes {
                rename(path, rotatedPath)
            }
        }
        // Read as well as written: the last byte is looked at (below). A log of one's own that is
        // write-only (0200) is still written, without that look, and made private again below.
        var descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor < 0 && errno == EACCES { descriptor = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC) }
        guard descriptor >= 0 else {
            let why = errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno))
            throw PermissionChangeError(message: "cannot write the access log \(path): \(why)")
        }
        defer { close(descriptor) }
        // A log made readable by others (0644) is private again: it names every recording. One
        // that others could have written (0666), or another user's, is left as it is and not
        // written: making it private would make lines nobody can vouch for look like hark's, and
        // `entries()` refuses to read it anyway; the caller says so.
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw PermissionChangeError(message: "cannot write the access log \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            throw PermissionChangeError(message: "the access log \(path) is "
                + (info.st_uid != geteuid() ? "another user's" : "writable by others")
                + ", so hark does not write to it; move it away, or make it a private file of yours (chmod 600)")
        }
        if info.st_mode & 0o777 != 0o600 { _ = fchmod(descriptor, 0o600) }
        // A line cut short (a full disk's short write, a power cut) has no newline: this line
        // starts on one of its own, or it was glued to the torn one and both were lost to readers.
        // (Two writers doing this at once leave an empty line, which readers skip.)
        var lastByte: UInt8 = 0x0A
        if info.st_size > 0, pread(descriptor, &lastByte, 1, info.st_size - 1) == 1, lastByte != 0x0A {
            line.insert(0x0A, at: 0)
        }
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress!, $0.count) }
        guard written == line.count else {
            throw PermissionChangeError(message: "cannot write the access log \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// All entries, oldest first (the rotated file, then the current one). Unparseable lines, and
    /// the lines of events (`RecordingStart`), are skipped.
    public func entries() -> [AccessLogEntry] {
        lines().compactMap(AccessLogEntry.init(json:))
    }

    /// Every line that parses as JSON, oldest first.
    func lines() -> [JSONValue] {
        rawLines().compactMap { try? JSONValue(parsing: $0) }
    }

    /// The log's folder.
    private var directory: String { String(path[..<path.lastIndex(of: "/")!]) }

    /// Why the log's folder cannot be trusted (as `appendLine` checks it before writing), or nil:
    /// it is a private folder of the user's, or there is none yet.
    private func directoryProblem() -> SecureFile.Problem? {
        guard SecureFile.somethingIsAt(directory) else { return nil }
        do throws(SecureFile.Problem) {
            try SecureFile.checkPrivateDirectory(directory)
            return nil
        } catch {
            return error
        }
    }

    /// The previous generation, which the log is renamed to when it passes `maxBytes`.
    private var rotatedPath: String { path + ".1" }

    /// Whether the log has been rotated, so entries older than its oldest are gone.
    public var hasRotated: Bool {
        var info = stat()
        return lstat(rotatedPath, &info) == 0
    }

    /// Why the log or its rotated part is not read, and what to do, a line each ("the access log
    /// … is writable by other users (mode 666), so it is not read; move it away, or …"); empty
    /// when both are read (or absent). What cannot be trusted to
    /// be hark's own writing is left out of `entries()`, so a command showing them says this too.
    public func untrustedParts() -> [String] {
        // A folder that is a link, another user's or writable by others, which a recording will
        // not write into, is not read either: what is in it may not be hark's writing.
        if let problem = directoryProblem() {
            return ["the access log's folder \(directory) \(problem.text), so the log is not read; "
                + "move it away, or make it a private folder of yours (chmod 700)"]
        }
        return [rotatedPath, path].compactMap { file in
            do throws(SecureFile.Problem) {
                _ = try SecureFile.readTrusted(file, maxBytes: 2 * maxBytes + 65_536)
                return nil
            } catch {
                return "the access log \(file) \(error.text), so it is not read; move it away, or make it a private file of yours (chmod 600)"
            }
        }
    }

    /// Every line's bytes, oldest first (the rotated file, then the current one), unparsed: slices
    /// of the two files as read.
    func rawLines() -> [ArraySlice<UInt8>] {
        guard directoryProblem() == nil else { return [] }
        return [rotatedPath, path].flatMap { file -> [ArraySlice<UInt8>] in
            guard let bytes = try? SecureFile.readTrusted(file, maxBytes: 2 * maxBytes + 65_536) else { return [] }
            return bytes.split(separator: 0x0A)
        }
    }
}

/// An entry's line, byte for byte as Foundation's `JSONEncoder` wrote it with
/// `[.sortedKeys, .withoutEscapingSlashes]` and ISO 8601 dates, so logs written by earlier versions
/// read and later lines match them:
///
///     {"app":"dev.hark.cli","consent":"stored","device":"filecap","end":"2026-11-22T02:22:01Z",…}
///
/// The counters are left out when nil, and `resource` when it is the microphone (so a microphone
/// entry is the line earlier versions wrote). Reading asks what `JSONDecoder` asked of the
/// `Codable` struct: the other keys present with values of the right type, unknown keys ignored.
extension AccessLogEntry {
    /// The entry as the log stores it: one line of JSON, keys sorted, no newline.
    public var jsonLine: String { encodedLine().map { String(decoding: $0, as: UTF8.self) } ?? "{}" }

    /// Nil when `start` or `end` is too far out to write as ISO 8601.
    func encodedLine() -> [UInt8]? {
        guard let start = start.iso8601, let end = end.iso8601 else { return nil }
        var members: [String: JSONValue] = [
            "start": .string(start), "end": .string(end), "app": .string(app), "device": .string(device),
            "format": .string(format), "output": .string(output), "frames": .number(Double(frames)),
            "consent": .string(consent.rawValue), "ended": .string(ended),
        ]
        if resource != .microphone { members["resource"] = .string(resource.rawValue) }
        members["framesDropped"] = framesDropped.map { .number(Double($0)) }
        members["framesDroppedPadded"] = framesDroppedPadded.map { .number(Double($0)) }
        members["overruns"] = overruns.map { .number(Double($0)) }
        members["framesLostToOverruns"] = framesLostToOverruns.map { .number(Double($0)) }
        members["framesPadded"] = framesPadded.map { .number(Double($0)) }
        members["id"] = recordingID.map { .string($0) }
        members["firstSample"] = firstSample?.iso8601Microseconds.map { .string($0) }
        members["clockDriftPPM"] = clockDriftPPM.map { .number(($0 * 10).rounded() / 10) }
        members["segment"] = segment.map { .number(Double($0)) }
        if savedToLibrary { members["library"] = .bool(true) }
        for (key, value) in loudness where Self.loudnessKeys.contains(key) { members[key] = .number(value) }
        return JSONValue.object(members).serialized(.compactLine)
    }

    init?(json: JSONValue) {
        func time(_ key: String) -> WallClockTime? { json[key]?.stringValue.flatMap(WallClockTime.init(iso8601:)) }
        // .some(nil) when absent or null, nil when present but not a whole number.
        func optionalCount(_ key: String) -> Int?? {
            guard let value = json[key], value != .null else { return .some(nil) }
            return value.exactInt.map { .some($0) }
        }
        guard let start = time("start"), let end = time("end"), let app = json["app"]?.stringValue,
              let device = json["device"]?.stringValue, let format = json["format"]?.stringValue,
              let output = json["output"]?.stringValue, let frames = json["frames"]?.exactInt,
              let consent = json["consent"]?.stringValue.flatMap(ConsentSource.init(rawValue:)),
              let ended = json["ended"]?.stringValue, let framesDropped = optionalCount("framesDropped"),
              let overruns = optionalCount("overruns"), let framesLostToOverruns = optionalCount("framesLostToOverruns"),
              let framesPadded = optionalCount("framesPadded"), let framesDroppedPadded = optionalCount("framesDroppedPadded")
        else { return nil }
        let resource: PermissionResource
        switch json["resource"] {
        case nil, .null?: resource = .microphone
        case .string(let name)? where PermissionResource(rawValue: name)?.isCaptureSource == true:
            resource = PermissionResource(rawValue: name)!
        default: return nil
        }
        self.init(start: start, end: end, app: app, device: device, format: format, output: output, frames: frames,
                  consent: consent, resource: resource, ended: ended, framesDropped: framesDropped, overruns: overruns,
                  framesLostToOverruns: framesLostToOverruns, framesPadded: framesPadded, recordingID: json["id"]?.stringValue)
        self.framesDroppedPadded = framesDroppedPadded
        firstSample = json["firstSample"]?.stringValue.flatMap(WallClockTime.init(iso8601:))
        if case .number(let drift)? = json["clockDriftPPM"] { clockDriftPPM = drift }
        segment = json["segment"]?.exactInt
        savedToLibrary = json["library"] == .bool(true)
        for key in Self.loudnessKeys {
            if case .number(let value)? = json[key] { loudness[key] = value }
        }
    }
}
