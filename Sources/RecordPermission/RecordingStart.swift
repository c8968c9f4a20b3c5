#if canImport(Glibc)
import Glibc
#endif

/// A recording that has started, as the access log keeps it: a line written when capture starts,
/// before the first audio, so a recording that never ends (SIGKILL, a power cut, a crash) is still
/// known; each file a split starts later adds a `file` event line. Its entry, written when it ends,
/// carries the same `id`; a start with no entry and no live process is an unfinished recording
/// (`hark repair --unfinished`).
///
///     {"boot":"…","event":"started","id":"…","output":"/home/a/talk.flac","outputs":["/home/a/talk.flac"],"pid":4242,"processStart":123456,"start":"…"}
///
/// `outputs` (and `unnamedOutputs`) list the paths one by one; `output` (and `unnamed`) join them
/// with ", " for a person and for hark versions before the lists, which split them there: a name
/// holding ", " itself came apart into names of no file, and its killed recording was not found
/// to repair. A line without the lists (an older hark's) is read that way still.
///
/// A file that replaces one of its name is named only with its first audio: until then the path
/// holds the old file, which is not this recording's. Such files are listed under `unnamed` too,
/// and count as the recording's only once a `named` event says they were named; lines without the
/// key (and hark versions before it, which read `output` alone) count every output.
///
/// Lines of events have no "end", so `AccessLog.entries()` and earlier versions skip them.
public struct RecordingStart: Sendable, Equatable {
    public let id: String
    public let start: WallClockTime
    /// Absolute paths of the files the recording writes (its first files, when it splits); read
    /// from the log, only those that are its own by then (see `namedAtFirstAudio`).
    public internal(set) var outputs: [String]
    /// Those of `outputs` named only with their first audio (each replaces a file of that name).
    public let namedAtFirstAudio: [String]
    public let device: String
    /// Sound-activated (`--start-above`): its files start with its first sound, each told by a
    /// `file` event, so one killed before any sound wrote nothing and is not unfinished.
    public let waitsForSound: Bool
    let processID: Int32
    /// The kernel's boot id and the process's start time in clock ticks since boot
    /// (/proc/self/stat, field 22): with the pid, they tell a live recorder from a reused pid.
    let bootID: String
    let processStart: UInt64

    /// A new random id for a recording.
    public static func newID() -> String {
        (0..<2).map { _ in
            let digits = String(UInt64.random(in: 0...UInt64.max), radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits  // every id as long
        }.joined(separator: "-")
    }

    /// A start for this process.
    public init(id: String = newID(), outputs: [String], namedAtFirstAudio: [String] = [], device: String,
                start: WallClockTime = .now(), waitsForSound: Bool = false) {
        self.id = id
        self.namedAtFirstAudio = namedAtFirstAudio
        self.waitsForSound = waitsForSound
        self.start = start
        self.outputs = outputs
        self.device = device
        processID = getpid()
        bootID = Self.currentBootID
        processStart = Self.startTime(of: getpid()) ?? 0
    }

    init?(json: JSONValue) {
        guard json["event"]?.stringValue == "started", let id = json["id"]?.stringValue,
              let start = json["start"]?.stringValue.flatMap(WallClockTime.init(iso8601:)),
              let output = json["output"]?.stringValue, let pid = json["pid"]?.exactInt,
              let boot = json["boot"]?.stringValue, let processStart = json["processStart"]?.exactInt
        else { return nil }
        self.id = id
        self.start = start
        outputs = Self.paths(json["outputs"]) ?? output.split(separator: ", ").map(String.init)
        namedAtFirstAudio = Self.paths(json["unnamedOutputs"])
            ?? json["unnamed"]?.stringValue.map { $0.split(separator: ", ").map(String.init) } ?? []
        device = json["device"]?.stringValue ?? ""
        waitsForSound = json["armed"] == .bool(true)
        processID = Int32(clamping: pid)
        bootID = boot
        self.processStart = UInt64(max(0, processStart))
    }

    var jsonLine: [UInt8]? {
        guard let start = start.iso8601 else { return nil }
        var members: [String: JSONValue] = [
            "event": .string("started"), "id": .string(id), "start": .string(start), "output": .string(outputs.joined(separator: ", ")),
            "device": .string(device), "pid": .number(Double(processID)), "boot": .string(bootID), "processStart": .number(Double(processStart)),
        ]
        members["outputs"] = .array(outputs.map(JSONValue.string))
        if waitsForSound { members["armed"] = .bool(true) }
        if !namedAtFirstAudio.isEmpty {
            members["unnamed"] = .string(namedAtFirstAudio.joined(separator: ", "))
            members["unnamedOutputs"] = .array(namedAtFirstAudio.map(JSONValue.string))
        }
        return JSONValue.object(members).serialized(.compactLine)
    }

    /// A list of paths (`outputs`, `unnamedOutputs`): nil when absent or not an array of strings.
    private static func paths(_ value: JSONValue?) -> [String]? {
        guard let elements = value?.arrayValue else { return nil }
        let paths = elements.compactMap(\.stringValue)
        return paths.count == elements.count ? paths : nil
    }

    /// Whether the process that wrote this start is still running (same boot, same pid, same start time).
    var isRecorderAlive: Bool {
        bootID == Self.currentBootID && kill(processID, 0) == 0 && Self.startTime(of: processID) == processStart
    }

    static let currentBootID: String = {
        guard let bytes = readProcFile("/proc/sys/kernel/random/boot_id") else { return "" }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: " \n")
    }()

    static func startTime(of pid: Int32) -> UInt64? {
        guard let bytes = readProcFile("/proc/\(pid)/stat") else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces: count from its end.
        let text = String(decoding: bytes, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil  // field 22 is the 20th after the name
    }
}

/// A file of procfs, whose size reads as 0 until it is read: up to 4 KiB of it.
private func readProcFile(_ path: String) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes = [UInt8](repeating: 0, count: 4_096)
    let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
    return count > 0 ? Array(bytes.prefix(count)) : nil
}

/// What the access log says about recordings that started: which never ended.
extension AccessLog {
    /// Logs that `start` began. Not real-time safe; once per recording, before its first audio.
    public func appendStart(_ start: RecordingStart) throws(PermissionChangeError) {
        guard let line = start.jsonLine else { throw PermissionChangeError(message: "cannot encode a recording's start") }
        try appendLine(line)
    }

    /// Logs an event of a recording: `file` (a split started this file), `named` (a file it
    /// replaces one with got its name, with its first audio), `noticed` (a later
    /// recording said it was left unfinished) or `repaired` (hark repair --unfinished dealt with
    /// it; it is no longer listed).
    public func appendEvent(_ event: RecordingEvent, recordingID: String) throws(PermissionChangeError) {
        guard let time = WallClockTime.now().iso8601 else { return }
        var members: [String: JSONValue] = ["event": .string(event.name), "id": .string(recordingID), "time": .string(time)]
        if case .file(let path) = event { members["output"] = .string(path) }
        if case .named(let path) = event { members["output"] = .string(path) }
        try appendLine(JSONValue.object(members).serialized(.compactLine))
    }

    /// Recordings that started and have neither an entry (they never ended) nor a live recorder,
    /// oldest first, leaving out those repaired; `noticed` says whether one was already reported.
    ///
    /// Every `hark record` asks this, and a log near its rotation size holds thousands of lines:
    /// so each line is skimmed for the four keys that say what it is, and only the starts left
    /// without an end are parsed whole. A full log (two files of 1 MB) added 42 ms of CPU to every
    /// recording's start when each line was parsed whole, and adds 9 ms skimmed (`perf stat` of
    /// `hark record -d 1`, 2026-11-25). The result is what parsing every line gives: the
    /// skim accepts exactly the lines the parser does, and a start that does not parse as one is
    /// passed over either way.
    public func unfinishedRecordings() -> [(start: RecordingStart, noticed: Bool)] {
        var starts: [(id: String, line: ArraySlice<UInt8>)] = []
        var ended: Set<String> = []
        var noticed: Set<String> = []
        var laterFiles: [String: [String]] = [:]
        var named: [String: Set<String>] = [:]
        for line in rawLines() {
            guard let members = try? JSONValue.members(["event", "id", "segment", "output"], of: line),
                  let id = members[1]?.stringValue else { continue }
            switch members[0]?.stringValue {
            case "started"?: starts.append((id, line))
            case "noticed"?: noticed.insert(id)
            case "repaired"?: ended.insert(id)
            case "file"?: if let path = members[3]?.stringValue { laterFiles[id, default: []].append(path) }
            case "named"?: if let path = members[3]?.stringValue { named[id, default: []].insert(path) }
            case nil where members[2] == nil: ended.insert(id)  // an entry: the recording ended
            default: break
            }
        }
        return starts.compactMap { id, line in
            guard !ended.contains(id), let json = try? JSONValue(parsing: line), var start = RecordingStart(json: json),
                  !start.isRecorderAlive else { return nil }
            // A file to be named with its first audio that was not: its path holds another file.
            let namedFiles = named[start.id] ?? []
            start.outputs = start.outputs.filter { !start.namedAtFirstAudio.contains($0) || namedFiles.contains($0) }
            start.outputs += laterFiles[start.id] ?? []
            // Armed and killed before any sound: nothing to repair. (To stdout only, or killed
            // before its first audio, it is listed with no file.)
            if start.waitsForSound && start.outputs.isEmpty { return nil }
            return (start, noticed.contains(start.id))
        }
    }
}

/// What happened to a recording after it started, as the access log keeps it.
public enum RecordingEvent: Sendable, Equatable {
    /// A split started this file (absolute path).
    case file(String)
    /// A file that replaces one of its name got that name, with its first audio (absolute path).
    case named(String)
    /// A later recording said that this one was left unfinished.
    case noticed
    /// `hark repair --unfinished` dealt with it.
    case repaired

    var name: String {
        switch self {
        case .file: "file"
        case .named: "named"
        case .noticed: "noticed"
        case .repaired: "repaired"
        }
    }
}

private extension String {
    func trimmingCharacters(in set: String) -> String {
        var characters = Substring(self)
        while let first = characters.first, set.contains(first) { characters.removeFirst() }
        while let last = characters.last, set.contains(last) { characters.removeLast() }
        return String(characters)
    }
}
