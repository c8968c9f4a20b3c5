import AudioFormat
import CPulse
import Capture
import Realtime
import RecordPermission
#if canImport(Glibc)
import Glibc
#endif

/// A record stream of the sound server's own (libpulse; PulseAudio, or PipeWire through its
/// PulseAudio protocol): what `pulse`, `pulse:SOURCE`, a source's name or description, and ALSA's
/// `default` on a desktop record from.
///
/// Why not ALSA's pulse plugin: the plugin runs libpulse's threaded main loop, a thread of its own
/// that wakes for every packet the server sends (25–30 a second here) and then wakes the capture
/// thread through a pipe, 1.5 times a period. Here libpulse's plain main loop runs on the capture
/// thread itself, which sleeps a period at a time on an absolute cadence and then takes whatever
/// the server sent meanwhile: one thread, one wake-up a period (#16).
///
/// Threads: opened on the main thread; from `CaptureLoop.run()` on, used by the capture thread
/// alone (libpulse's main loop is not thread-safe, and is never used by two threads at once).
/// Every libpulse stream call hark makes is in this file.
public final class SoundServerCapture: CaptureSource, @unchecked Sendable {
    private let connection: SoundServerConnection
    private let library: PulseLibrary
    private let stream: OpaquePointer
    public let negotiated: NegotiatedCapture
    private let bytesPerFrame: Int
    private let periodNanoseconds: Int
    /// One period of space for frames read while every ring is full, which are then dropped.
    private let scratch: UnsafeMutableRawPointer
    /// The fragment `pa_stream_peek` handed out and not yet dropped: its start (nil for a hole,
    /// audio the server lost, read as silence), its length and how much of it was read. Invariant:
    /// `fragmentOffset < fragmentLength` while `hasFragment`. Capture thread only.
    private var hasFragment = false
    private var fragment: UnsafeRawPointer?
    private var fragmentLength = 0
    private var fragmentOffset = 0
    /// When the next wait ends (`MonotonicClock`); 0 before the first. Capture thread only.
    private var nextWake = 0
    /// The most a record stream's queue holds: PulseAudio caps `maxlength` at 4 MiB
    /// (`MAX_MEMBLOCKQ_LENGTH`), as does PipeWire's pulse server.
    static let serverQueueLimitBytes = 4 << 20

    /// Connects to the sound server and opens a corked record stream from `source` (its name, or
    /// nil for the server's default source) in `request`'s format, with `request`'s period as the
    /// server's fragment size and its buffer, but at least two seconds, as the most the server
    /// keeps for hark.
    ///
    /// Uses `connection`, made when `-D` was looked up, when it is still up; else connects anew.
    /// Either way the stream owns the connection from here on (one thread at a time).
    ///
    /// Requires the user's consent: a `CaptureGrant` only `PermissionGate.requestAccess(for:)` can
    /// make, and its purpose string, which the stream carries as its name, so the desktop's
    /// microphone indicator and mixer show why hark listens.
    /// Not real-time safe. The corresponding C functions are `pa_stream_new_with_proplist` and
    /// `pa_stream_connect_record`.
    public init(opening request: CaptureRequest, source: String?, grant: CaptureGrant,
                connection madeEarlier: SoundServerConnection? = nil,
                timeoutMilliseconds: Int = 5000) throws(CaptureOpenError) {
        grant.requireUsageDescription()
        let format = request.format
        let device = request.device
        guard format.sampleRate >= 1 && format.sampleRate <= Int(hark_pa_rate_max()) else {
            throw .unsupported(device: device, parameter: "rate", requested: "\(format.sampleRate) Hz",
                               supported: "1–\(hark_pa_rate_max()) Hz (the sound server's limits)")
        }
        guard let layout = PulseStreamFormat.requestedLayout(channels: format.channels, named: request.channelLayout) else {
            throw .unsupported(device: device, parameter: "channels", requested: "\(format.channels)",
                               supported: "1–8 (or name the speakers with --channel-map)")
        }
        let connection: SoundServerConnection
        do throws(SoundServerError) {
            if let madeEarlier, madeEarlier.readyForStream(timeoutMilliseconds: timeoutMilliseconds) {
                connection = madeEarlier
            } else {
                connection = try SoundServerConnection(timeoutMilliseconds: timeoutMilliseconds)
            }
        } catch {
            throw .unavailable(device: device, reason: "\(error)")
        }
        let library = connection.library
        self.connection = connection
        self.library = library
        bytesPerFrame = format.bytesPerFrame
        var spec = pa_sample_spec(format: PulseStreamFormat.sampleFormat(format.sampleFormat),
                                  rate: UInt32(format.sampleRate), channels: UInt8(format.channels))
        var map = PulseStreamFormat.channelMap(layout)
        let purpose = grant.manifest.usageDescription(for: grant.resource) ?? grant.manifest.displayName
        guard let properties = library.proplistNew() else { throw .unavailable(device: device, reason: "out of memory") }
        defer { library.proplistFree(properties) }
        _ = library.proplistSets(properties, "media.name", purpose)
        _ = library.proplistSets(properties, "media.role", "production")
        guard let stream = library.streamNew(connection.context, purpose, &spec, &map, properties) else {
            throw .unavailable(device: device, reason: "the sound server refused the stream: \(connection.errorText())")
        }
        self.stream = stream
        // A period is read whole while the server queues the next, so two must fit in the queue
        // (`serverQueueLimitBytes`): a longer one lost audio every period (a 2 s period at 96 kHz
        // × 8 × 32-bit is 6 MB). It is cut to half the queue, as ALSA fits a period to what a
        // device allows; `-v` and HARK_CAPTURE give the period used.
        let requestedPeriodFrames = format.frames(forSeconds: Double(request.periodMicroseconds) / 1e6)
        let periodBytes = UInt32(min(requestedPeriodFrames, Self.serverQueueLimitBytes / 2 / bytesPerFrame) * bytesPerFrame)
        let bufferBytes = UInt32(format.frames(forSeconds: Double(request.bufferMicroseconds) / 1e6) * bytesPerFrame)
        // Record streams use maxlength and fragsize; the rest are "the server's choice". While the
        // capture thread sleeps, the server's queue is the only buffer (there is no client thread
        // draining the socket, as in ALSA's plugin), and what overflows it is dropped a packet at a
        // time, each too short for `TimelineGuard` to see: so at least two seconds, enough for a
        // capture thread held off the CPU on a loaded machine (a 16 ms piece went missing with the
        // 500 ms default under the full AddressSanitizer suite).
        let twoSeconds = UInt32(format.frames(forSeconds: 2) * bytesPerFrame)
        var attributes = pa_buffer_attr(maxlength: max(bufferBytes, 2 * periodBytes, twoSeconds), tlength: UInt32.max,
                                        prebuf: UInt32.max, minreq: UInt32.max, fragsize: periodBytes)
        // ADJUST_LATENCY: the source's own latency follows the fragment size, so a microphone's
        // server thread wakes a period at a time too. Corked until the capture loop starts it.
        // DONT_MOVE: the stream stays on the source the user was asked about. A movable stream
        // could be moved by anyone on the session (pavucontrol, `pactl move-source-output`) or by
        // the server when its source went away (PulseAudio's module-rescue-streams), onto another
        // microphone or onto a monitor, recording what the system plays on a microphone grant,
        // logged as the microphone. Unmovable, a source that goes away ends the stream, and the
        // recording stops as from an unplugged device: a finished file, exit 74.
        let flags = pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_START_CORKED.rawValue
                                      | PA_STREAM_DONT_MOVE.rawValue)
        let connected = library.streamConnectRecord(stream, source, &attributes, flags)
        do throws(SoundServerError) {
            guard connected >= 0 else { throw .failed(connection.errorText()) }
            try connection.run(until: { [library] in
                let state = library.streamGetState(stream)
                return state != PA_STREAM_CREATING && state != PA_STREAM_UNCONNECTED
            })
        } catch {
            library.streamUnref(stream)
            throw .unavailable(device: device, reason: "\(error)")
        }
        guard library.streamGetState(stream) == PA_STREAM_READY else {
            let code = library.contextErrno(connection.context)
            library.streamUnref(stream)
            if code == Int32(PA_ERR_NOENTITY.rawValue) { throw .notFound(device: device) }
            throw .unavailable(device: device, reason: connection.errorText())
        }
        do throws(CaptureOpenError) {
            try Self.requireGrantCovers(sourceOf: stream, grant: grant, device: device, connection: connection)
        } catch {
            _ = library.streamDisconnect(stream)
            library.streamUnref(stream)
            throw error
        }
        let granted = library.streamGetBufferAttr(stream)?.pointee ?? attributes
        // The period is hark's own cadence, whatever fragment size the server settled on (a source
        // with a fixed latency, such as a pipe, sends smaller fragments; they are read a period at
        // a time all the same).
        let periodFrames = max(1, Int(periodBytes) / bytesPerFrame)
        let grantedMap = library.streamGetChannelMap(stream).map { PulseStreamFormat.layout($0.pointee) } ?? layout
        negotiated = NegotiatedCapture(device: device, format: format, periodFrames: periodFrames,
                                       bufferFrames: max(periodFrames, Int(granted.maxlength) / bytesPerFrame),
                                       channelLayout: grantedMap)
        periodNanoseconds = periodFrames * 1_000_000_000 / format.sampleRate
        scratch = .allocate(byteCount: periodFrames * bytesPerFrame, alignment: 64)
    }

    /// Checks that the source the server connected `stream` to is what `grant` is for: a monitor
    /// (what the system plays) on a system-audio grant, any other source on the microphone's.
    /// Only the default source can be other than what `-D` was looked up as (`DeviceChoice`): the
    /// user may have made a monitor the default while the consent prompt waited. A source the
    /// connection was already asked about is not asked about again (one exchange less at every
    /// start: the answer to `-D`'s look-up).
    /// The corresponding C function is `pa_stream_get_device_name`.
    private static func requireGrantCovers(sourceOf stream: OpaquePointer, grant: CaptureGrant, device: String,
                                           connection: SoundServerConnection) throws(CaptureOpenError) {
        guard let name = connection.library.streamGetDeviceName(stream).map({ String(cString: $0) }) else {
            throw .unavailable(device: device, reason: "the sound server did not say which source the stream records from")
        }
        let isMonitor: Bool
        if let answered = connection.monitorAnswers[name] {
            isMonitor = answered
        } else {
            do throws(SoundServerError) {
                isMonitor = try connection.isMonitor(source: name)
            } catch {
                throw .unavailable(device: device, reason: "\(error)")
            }
        }
        guard isMonitor == (grant.resource == .systemAudio) else {
            throw .notCoveredByGrant(device: device, source: name, isMonitor: isMonitor)
        }
    }

    deinit {
        if library.streamGetState(stream) == PA_STREAM_READY { _ = library.streamDisconnect(stream) }
        library.streamUnref(stream)
        scratch.deallocate()
    }

    // MARK: Hot path (capture thread only; real-time safe)

    /// Uncorks the stream. The corresponding C function is `pa_stream_cork`; its reply is
    /// dispatched by a later turn of the main loop, and not waited for.
    public func start() -> CaptureStep {
        if let operation = library.streamCork(stream, 0, nil, nil) { library.operationUnref(operation) }
        return pumpWithoutWaiting()
    }

    /// Copies up to `frames` frames from the fragments libpulse holds, dropping each once it is
    /// read whole. Fragments are whole frames (libpulse's queue is frame-aligned). A hole (audio
    /// the server lost) reads as silence, which keeps the recording's timeline. Never waits and
    /// makes no system call: the data already arrived in `waitForFrames`.
    /// The corresponding C functions are `pa_stream_peek` and `pa_stream_drop`.
    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> CaptureStep {
        let wanted = frames * bytesPerFrame
        var copied = 0
        while copied < wanted {
            if !hasFragment {
                // Every libpulse call checks getpid() for a fork: peek alone says there is
                // nothing (a zero length), without asking `pa_stream_readable_size` first.
                var data: UnsafeRawPointer?
                var length = 0
                guard library.streamPeek(stream, &data, &length) == 0 else { return .failed(errno: failureCode() ?? EIO) }
                guard length > 0 else { break }
                (hasFragment, fragment, fragmentLength, fragmentOffset) = (true, data, length, 0)
            }
            let count = min(fragmentLength - fragmentOffset, wanted - copied)
            if let fragment {
                memcpy(buffer + copied, fragment + fragmentOffset, count)
            } else {
                memset(buffer + copied, 0, count)
            }
            copied += count
            fragmentOffset += count
            if fragmentOffset == fragmentLength {
                _ = library.streamDrop(stream)
                (hasFragment, fragment) = (false, nil)
            }
        }
        // A stream that ended is reported by the wait that follows "would block".
        return copied == 0 ? .wouldBlock : .frames(copied / bytesPerFrame)
    }

    public func readIntoScratch(frames: Int) -> CaptureStep {
        read(into: scratch, frames: min(frames, negotiated.periodFrames))
    }

    /// Sleeps until the next turn of a steady cadence, one period after the last (at most
    /// `milliseconds`), without listening to the server meanwhile, then lets libpulse take in
    /// everything the server sent. The server's packets do not line up with periods, so a wait
    /// that ended when a period had arrived would wake on some packets and not others (1.5 times a
    /// period); a cadence wakes once a period, and each turn reads about a period, sometimes a
    /// packet more or less. The server holds up to the negotiated buffer meanwhile.
    ///
    /// The price: `TimelineGuard` sees the timeline at moments unrelated to when packets arrived,
    /// so a short recording's clock drift is good to a few milliseconds over its span (hundreds of
    /// ppm over 16 s, where waking on arrival gave tens; docs/known-limits.md).
    /// The corresponding C functions are `clock_nanosleep` and libpulse's main loop.
    public func waitForFrames(milliseconds: Int32) -> CaptureStep {
        let now = MonotonicClock.nanoseconds()
        // Back from a long stall (a stopped process): start the cadence again from now.
        if nextWake < now - periodNanoseconds { nextWake = now }
        let wake = min(nextWake, now + Int(milliseconds) * 1_000_000)
        MonotonicClock.sleep(until: wake)
        nextWake = max(nextWake, wake) + periodNanoseconds
        return pumpWithoutWaiting()
    }

    /// The sound server reports no overruns: what it dropped shows as a hole, or as time missing
    /// from the stream, which `TimelineGuard` finds.
    public func recoverFromOverrun() -> Int? { 0 }

    /// Nothing to resume: the server suspends and resumes its devices itself.
    public func resumeAfterSuspend(shouldGiveUp: () -> Bool) -> Bool { true }

    /// Asks the server for the stream's timing and takes its latency: how long ago the next frame
    /// libpulse hands out was captured. The reply's moment is taken as the middle of the round
    /// trip. The one blocking exchange on the capture thread, twice per recording (each up to four
    /// times when the server is too slow to answer) and once more per step in the timeline (rare):
    /// it waits for the server's reply on the socket, at most 200 ms, which the server's two-second
    /// queue and the ring absorb.
    /// The corresponding C functions are `pa_stream_update_timing_info` and `pa_stream_get_latency`.
    public func timeOfNextFrame() -> Int? {
        let asked = MonotonicClock.nanoseconds()
        guard let operation = library.streamUpdateTimingInfo(stream, nil, nil) else { return nil }
        defer { library.operationUnref(operation) }
        let deadline = asked + 200_000_000
        while library.operationGetState(operation) == PA_OPERATION_RUNNING {
            let left = deadline - MonotonicClock.nanoseconds()
            guard left > 0, library.mainloopPrepare(connection.mainloop, Int32(left / 1000)) >= 0,
                  library.mainloopPoll(connection.mainloop) >= 0, library.mainloopDispatch(connection.mainloop) >= 0
            else { return nil }
        }
        let answered = MonotonicClock.nanoseconds()
        var microseconds: pa_usec_t = 0
        var negative: Int32 = 0
        guard library.streamGetLatency(stream, &microseconds, &negative) == 0 else { return nil }
        let latency = (negative != 0 ? -1 : 1) * Int(microseconds) * 1000
        // libpulse's latency counts from the start of the fragment being read.
        let alreadyRead = (hasFragment ? fragmentOffset / bytesPerFrame : 0) * 1_000_000_000 / negotiated.format.sampleRate
        return asked + (answered - asked) / 2 - latency + alreadyRead
    }

    /// ESTRPIPE when the server suspended the source (`pactl suspend-source`, a sink suspended
    /// under its monitor, a device gone to sleep), which sends nothing until resumed; else
    /// ETIMEDOUT. libpulse keeps the state from the server's messages, which every turn of the
    /// main loop takes in: no exchange with the server. PulseAudio sends them to every stream;
    /// pipewire-pulse only to streams made with PA_STREAM_DONT_INHIBIT_AUTO_SUSPEND, which hark's
    /// is not (its source must not be suspended for being idle), so there the answer is
    /// ETIMEDOUT. The corresponding C function is `pa_stream_is_suspended`.
    public func reasonForNoAudio() -> Int32 {
        library.streamIsSuspended(stream) == 1 ? ESTRPIPE : ETIMEDOUT
    }

    /// Corks the stream, so the server stops sending; the stream itself ends in `deinit`.
    public func drop() {
        if let operation = library.streamCork(stream, 1, nil, nil) { library.operationUnref(operation) }
        _ = pumpWithoutWaiting()
    }

    // MARK: The main loop, without sleeping

    /// Lets libpulse take in everything the server sent (`SoundServerConnection.dispatchPending`).
    /// Returns `.failed` once the connection or the stream has ended. A turn of the main loop that
    /// failed on its own (poll's rare errors) is tried again a period later; its data waits in
    /// the server's queue meanwhile.
    private func pumpWithoutWaiting() -> CaptureStep {
        _ = connection.dispatchPending()
        if let code = failureCode() { return .failed(errno: code) }
        return .frames(0)
    }

    /// Why the stream cannot deliver any more, as an errno: ECONNRESET when the server went away,
    /// ENODEV when it ended the stream (its source was removed, or the stream was killed).
    private func failureCode() -> Int32? {
        if library.contextGetState(connection.context) != PA_CONTEXT_READY { return ECONNRESET }
        if library.streamGetState(stream) != PA_STREAM_READY { return ENODEV }
        return nil
    }
}
