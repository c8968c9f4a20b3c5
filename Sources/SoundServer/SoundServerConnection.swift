import CPulse
#if canImport(Glibc)
import Glibc
#endif

/// A connection to the sound server: for looking around (its name, its default source, its capture
/// sources), and then for a recording's stream (`SoundServerCapture`), so that a recording that
/// asked which source `-D` names connects once, not twice (each connection costs hark about half a
/// millisecond of CPU: libpulse reads its client configuration and cookie and sets up a
/// shared-memory pool again). Never starts a server (`PA_CONTEXT_NOAUTOSPAWN`), never blocks longer
/// than its deadline. Not real-time safe; one thread at a time: made and asked on the main thread,
/// handed over whole to the capture thread with its stream.
///
/// libpulse's own main loop runs on the calling thread (`pa_mainloop_prepare`/`poll`/`dispatch`,
/// at most 50 ms a turn), so no thread is started and the callbacks run on this thread.
public final class SoundServerConnection {
    let library: PulseLibrary
    let mainloop: OpaquePointer
    let context: OpaquePointer
    /// When the current exchange gives up: set at the connect, and again when a stream takes the
    /// connection over (`readyForStream`), which may be long after (the consent prompt in between).
    private var deadline: timespec
    private var timeoutMilliseconds: Int
    /// What the server said of each source it was asked about or listed, by the source's own name:
    /// whether it is a monitor. A stream that reaches one of them needs no second question
    /// (`SoundServerCapture` checks its source against the grant).
    private(set) var monitorAnswers: [String: Bool] = [:]

    /// Connects to `server` (a libpulse server string, as an ALSA definition's `server` gives it),
    /// else to the one the environment names (`PULSE_SERVER`, else the user's runtime dir).
    /// The corresponding C functions are `pa_context_new` and `pa_context_connect`.
    public init(server: String? = nil, timeoutMilliseconds: Int = 2000) throws(SoundServerError) {
        library = try PulseLibrary.shared.get()
        guard let mainloop = library.mainloopNew() else { throw .failed("cannot create libpulse's main loop") }
        guard let api = library.mainloopGetAPI(mainloop), let context = library.contextNew(api, "hark") else {
            library.mainloopFree(mainloop)
            throw .failed("cannot create a libpulse context")
        }
        self.mainloop = mainloop
        self.context = context
        self.timeoutMilliseconds = timeoutMilliseconds
        deadline = Self.now(plusMilliseconds: timeoutMilliseconds)
        guard library.contextConnect(context, server, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else {
            throw notReached(server)
        }
        try run(until: { [library, context] in
            let state = library.contextGetState(context)
            return state == PA_CONTEXT_READY || state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED
        })
        guard library.contextGetState(context) == PA_CONTEXT_READY else { throw notReached(server) }
    }

    /// Why the connection failed: the server asked for, or the one `PULSE_SERVER` names, when
    /// either names one, could not be reached (another may well be running); else no server runs
    /// for this user.
    private func notReached(_ asked: String?) -> SoundServerError {
        if let server = asked ?? getenv("PULSE_SERVER").map({ String(cString: $0) }), !server.isEmpty {
            return .unreachable(server: server, reason: errorText())
        }
        return .notRunning(errorText())
    }

    deinit {
        library.contextDisconnect(context)
        library.contextUnref(context)
        library.mainloopFree(mainloop)
    }

    /// The server's sources, default marked.
    public func listing() throws(SoundServerError) -> SoundServerListing {
        let info = try serverInfo()
        return SoundServerListing(server: info.server, sources: try sources(defaultSource: info.defaultSource))
    }

    /// Whether the source named `name` (nil: the server's default source) is a sink's monitor, what
    /// the system plays; false for a name the server does not know. One exchange, for that source
    /// alone: PulseAudio and PipeWire both resolve `@DEFAULT_SOURCE@`.
    /// The corresponding C function is `pa_context_get_source_info_by_name`.
    public func isMonitor(source name: String?) throws(SoundServerError) -> Bool {
        try identify(source: name)?.isMonitor ?? false
    }

    /// The source `name` reaches (nil: the default source; also a special name such as
    /// `@DEFAULT_SOURCE@`, or an index): its own name, its description and whether it is a
    /// monitor; nil when the server knows no such source.
    /// The corresponding C function is `pa_context_get_source_info_by_name`.
    public func identify(source name: String?) throws(SoundServerError) -> SoundServerSource? {
        let collector = Collector()
        collector.library = library
        let operation = library.contextGetSourceInfoByName(context, name ?? "@DEFAULT_SOURCE@", { _, info, endOfList, userdata in
            // A name the server does not know ends the list at once (endOfList < 0).
            guard endOfList == 0, let info, let userdata else { return }
            let collector = Unmanaged<Collector>.fromOpaque(userdata).takeUnretainedValue()
            collector.identified = collector.source(from: info.pointee)
        }, Unmanaged.passUnretained(collector).toOpaque())
        try waitFor(operation, "the source's information")
        if let answered = collector.identified { monitorAnswers[answered.name] = answered.isMonitor }
        return collector.identified
    }

    /// Takes in whatever the server sent while the connection sat idle (it may have gone away
    /// meanwhile), gives the next exchanges `timeoutMilliseconds` from now, and says whether the
    /// connection can still carry a stream.
    func readyForStream(timeoutMilliseconds: Int) -> Bool {
        guard dispatchPending() else { return false }
        self.timeoutMilliseconds = timeoutMilliseconds
        deadline = Self.now(plusMilliseconds: timeoutMilliseconds)
        return library.contextGetState(context) == PA_CONTEXT_READY
    }

    /// Lets libpulse read and dispatch everything the server sent (and send what it queued, such as
    /// the releases of fragments a stream dropped), turning the main loop with a zero timeout until
    /// nothing is left, at most 64 turns. False when the main loop itself failed. Never waits, and
    /// hark allocates nothing here: the capture thread calls it once a period
    /// (`SoundServerCapture`). libpulse's dispatch takes its shared-memory import's mutex per
    /// packet, uncontended (this connection is the capture thread's alone).
    func dispatchPending() -> Bool {
        for _ in 0..<64 {
            guard library.mainloopPrepare(mainloop, 0) >= 0 else { return false }
            let ready = library.mainloopPoll(mainloop)
            guard ready >= 0 else { return false }
            let dispatched = library.mainloopDispatch(mainloop)
            guard dispatched >= 0 else { return false }
            if ready == 0 && dispatched == 0 { break }
        }
        return true
    }

    /// The server's name and version, and the name of its default source.
    /// The corresponding C function is `pa_context_get_server_info`.
    func serverInfo() throws(SoundServerError) -> (server: String, defaultSource: String?) {
        let collector = Collector()
        let operation = library.contextGetServerInfo(context, { _, info, userdata in
            guard let info, let userdata else { return }
            let collector = Unmanaged<Collector>.fromOpaque(userdata).takeUnretainedValue()
            let name = info.pointee.server_name.map { String(cString: $0) } ?? "sound server"
            let version = info.pointee.server_version.map { String(cString: $0) } ?? ""
            collector.serverName = version.isEmpty ? name : "\(name) \(version)"
            collector.defaultSource = info.pointee.default_source_name.map { String(cString: $0) }
        }, Unmanaged.passUnretained(collector).toOpaque())
        try waitFor(operation, "the server's information")
        return (collector.serverName ?? "sound server", collector.defaultSource)
    }

    /// Every source the server has, in the server's order (monitors included).
    /// The corresponding C function is `pa_context_get_source_info_list`.
    func sources(defaultSource: String?) throws(SoundServerError) -> [SoundServerSource] {
        let collector = Collector()
        collector.library = library
        let operation = library.contextGetSourceInfoList(context, { _, info, endOfList, userdata in
            guard endOfList == 0, let info, let userdata else { return }
            let collector = Unmanaged<Collector>.fromOpaque(userdata).takeUnretainedValue()
            collector.rawSources.append(collector.source(from: info.pointee))
        }, Unmanaged.passUnretained(collector).toOpaque())
        try waitFor(operation, "the list of sources")
        for source in collector.rawSources { monitorAnswers[source.name] = source.isMonitor }
        return collector.rawSources.map { $0.markingDefault(defaultSource) }
    }

    /// The sources that the record streams of process `processID` read now, one per stream, in
    /// the server's order: streams this connection did not make (ALSA's plugin makes its own), found
    /// by their `application.process.id` (`StreamIdentity` sets it for every client of hark's). A
    /// source that went away between the two questions is left out. Takes in what the server sent
    /// since the last exchange first, and gives the exchanges `timeoutMilliseconds` in all.
    /// The corresponding C functions are `pa_context_get_source_output_info_list` and
    /// `pa_context_get_source_info_by_name`.
    public func sourcesRecorded(byProcess processID: Int32, timeoutMilliseconds: Int = 1000) throws(SoundServerError) -> [SoundServerSource] {
        guard readyForStream(timeoutMilliseconds: timeoutMilliseconds) else {
            throw .failed("the sound server went away: \(errorText())")
        }
        let collector = Collector()
        collector.library = library
        collector.processID = String(processID)
        let operation = library.contextGetSourceOutputInfoList(context, { _, info, endOfList, userdata in
            guard endOfList == 0, let info, let userdata else { return }
            let collector = Unmanaged<Collector>.fromOpaque(userdata).takeUnretainedValue()
            guard let library = collector.library, let list = info.pointee.proplist,
                  let process = library.proplistGets(list, "application.process.id"),
                  String(cString: process) == collector.processID else { return }
            collector.sourceIndices.append(info.pointee.source)
        }, Unmanaged.passUnretained(collector).toOpaque())
        try waitFor(operation, "the list of recording streams")
        // The server takes a source's index for its name (`identify`).
        var sources: [SoundServerSource] = []
        for index in collector.sourceIndices {
            if let source = try identify(source: String(index)) { sources.append(source) }
        }
        return sources
    }

    // MARK: The main loop

    /// Runs libpulse's main loop until `isDone` or the deadline.
    func run(until isDone: () -> Bool) throws(SoundServerError) {
        while !isDone() {
            guard Self.now(plusMilliseconds: 0) < deadline else { throw .timedOut(milliseconds: timeoutMilliseconds) }
            guard library.mainloopPrepare(mainloop, 50_000) >= 0, library.mainloopPoll(mainloop) >= 0,
                  library.mainloopDispatch(mainloop) >= 0 else {
                throw .failed("libpulse's main loop failed: \(errorText())")
            }
        }
    }

    /// Waits for `operation` to finish (its callbacks have then all run) and releases it. One
    /// still running when the wait ends (the deadline passed: a stalled server) is cancelled
    /// first: its answer may still come, during a later exchange, and its callback would then
    /// reach a collector that is gone (the collectors are passed unretained). Cancelled, libpulse
    /// drops the callback (`pa_operation_cancel`), so none runs after this returns.
    func waitFor(_ operation: OpaquePointer?, _ what: String) throws(SoundServerError) {
        guard let operation else { throw .failed("cannot ask for \(what): \(errorText())") }
        defer {
            if library.operationGetState(operation) == PA_OPERATION_RUNNING { library.operationCancel(operation) }
            library.operationUnref(operation)
        }
        try run(until: { [library] in
            library.operationGetState(operation) != PA_OPERATION_RUNNING
                || library.contextGetState(context) != PA_CONTEXT_READY
        })
        guard library.contextGetState(context) == PA_CONTEXT_READY else {
            throw .failed("the sound server went away while hark asked for \(what)")
        }
    }

    func errorText() -> String {
        library.strerror(library.contextErrno(context)).map { String(cString: $0) } ?? "unknown error"
    }

    private static func now(plusMilliseconds milliseconds: Int) -> timespec {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        let nanoseconds = Int(time.tv_nsec) + (milliseconds % 1000) * 1_000_000
        time.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        time.tv_nsec = nanoseconds % 1_000_000_000
        return time
    }

    /// What the callbacks collect; passed to them unretained: it outlives every operation, since
    /// `waitFor` returns only once its operation is done or cancelled.
    private final class Collector {
        var library: PulseLibrary?
        var serverName: String?
        var defaultSource: String?
        /// The source `identify` was answered for.
        var identified: SoundServerSource?
        var rawSources: [SoundServerSource] = []
        /// `sourcesRecorded(byProcess:)`: the process asked about, and its streams' sources.
        var processID = ""
        var sourceIndices: [UInt32] = []

        func source(from info: pa_source_info) -> SoundServerSource {
            func property(_ key: String) -> String? {
                guard let library, let list = info.proplist, let value = library.proplistGets(list, key) else { return nil }
                return String(cString: value)
            }
            return SoundServerSource(
                name: info.name.map { String(cString: $0) } ?? "",
                description: info.description.map { String(cString: $0) } ?? "",
                sampleRate: Int(info.sample_spec.rate),
                channels: Int(info.sample_spec.channels),
                isMonitor: info.monitor_of_sink != hark_pa_invalid_index(),
                isDefault: false,
                alsaCard: property("alsa.card").flatMap { Int($0) },
                alsaDevice: property("alsa.device").flatMap { Int($0) })
        }
    }
}

extension timespec {
    static func < (left: timespec, right: timespec) -> Bool {
        (left.tv_sec, left.tv_nsec) < (right.tv_sec, right.tv_nsec)
    }
}
