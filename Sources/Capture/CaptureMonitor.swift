import Synchronization

/// State the capture thread shares with the rest of the session: counters it publishes, the
/// stop request it obeys, and how it ended.
///
/// Every counter is written only by the capture thread and read by others as a snapshot, so
/// relaxed ordering is enough for them; `isFinished` is the one flag that orders memory (see there).
public final class CaptureMonitor: Sendable {
    /// Frames of the recording's timeline: read from the device and offered to the rings
    /// (including frames a full ring dropped), plus silence padded in for lost time. Frames
    /// dropped are counted per output, in each `CaptureLane`.
    public let framesCaptured = Atomic<Int>(0)
    /// Overruns: times the device buffer filled before the capture thread read it, or the source
    /// was found to have lost audio without reporting it (see `TimelineGuard`).
    public let overruns = Atomic<Int>(0)
    /// Frames lost that way: from the device's status timestamps, or from the timeline.
    public let framesLostToOverruns = Atomic<Int>(0)
    /// Frames of silence written in place of lost ones (`--pad-overruns`); part of `framesCaptured`.
    public let framesPadded = Atomic<Int>(0)
    /// Steps in the source's timeline that its own latency report explained, so they were not
    /// counted as losses (`CaptureLoop`).
    public let latencySteps = Atomic<Int>(0)

    /// When the recording's first frame was captured, in `MonotonicClock` nanoseconds, from the
    /// source's answer (0 until known). Written once (release), after the first read whose timing
    /// the source answered and before its frames reach any ring (`CaptureLoop` asks after at most
    /// four reads).
    public let firstFrameTime = Atomic<Int>(0)
    /// How long the machine had been suspended when `firstFrameTime` was taken
    /// (`MonotonicClock.nanosecondsSuspended`): `firstFrameTime` plus this is the first frame's
    /// CLOCK_BOOTTIME, which a suspend later in the recording does not move (the monotonic clock
    /// stops in a suspend, so converting it with a later offset would put the first sample as
    /// much later). Stored (relaxed) before `firstFrameTime`'s release, so a reader that acquired
    /// a non-zero `firstFrameTime` reads the value that goes with it.
    public let firstFrameSuspendedNanoseconds = Atomic<Int>(0)
    /// The device clock against the system's, in parts per billion (`TimelineGuard`), written
    /// once as capture ends; `Int.min` when the recording was too short to tell.
    public let clockDriftPartsPerBillion = Atomic<Int>(Int.min)

    private let stopRequest = Atomic<Bool>(false)
    /// How many new files were asked for (SIGUSR1). Counted by the session's thread; the capture
    /// thread takes them between periods (`CaptureLoop`, `SplitSchedule`). Relaxed: the count
    /// carries no data, and a request is taken a period later at most.
    private let splitRequests = Atomic<Int>(0)
    private let finished = Atomic<Bool>(false)
    private let reason = Atomic<Int>(CaptureEndReason.stopRequested.rawValue)
    private let failureCode = Atomic<Int32>(0)

    public init() {}

    /// Asks the capture thread to stop after its current step. Safe from any thread.
    public func requestStop() {
        stopRequest.store(true, ordering: .relaxed)
    }

    /// Whether a stop was requested. Relaxed: the flag carries no data with it.
    public var isStopRequested: Bool { stopRequest.load(ordering: .relaxed) }

    /// Asks every splitting output for a new file from the capture's next frame on (SIGUSR1). Safe
    /// from any thread.
    public func requestSplit() {
        splitRequests.add(1, ordering: .relaxed)
    }

    /// How many new files were asked for so far (`requestSplit`).
    var splitsRequested: Int { splitRequests.load(ordering: .relaxed) }

    /// Whether the capture thread has written its last frame into the ring.
    ///
    /// Acquire pairs with the release in `finish(because:)`: once true, every frame the capture
    /// thread committed is visible to the reader, so a consumer that then finds the ring empty has
    /// really drained it.
    public var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Why capture ended; meaningful once `isFinished` is true.
    public var endReason: CaptureEndReason {
        CaptureEndReason(rawValue: reason.load(ordering: .relaxed)) ?? .stopRequested
    }

    /// The errno of the device failure when `endReason` is `.deviceLost`.
    public var deviceErrorCode: Int32 { failureCode.load(ordering: .relaxed) }

    /// Marks capture as over. The capture loop calls it when it returns; a session calls it when
    /// the capture thread could not be started, so the consumer does not wait for it forever.
    public func finish(because endReason: CaptureEndReason, errorCode: Int32 = 0) {
        reason.store(endReason.rawValue, ordering: .relaxed)
        failureCode.store(errorCode, ordering: .relaxed)
        // Release: the reason, the counters and every committed frame happen before this flag.
        finished.store(true, ordering: .releasing)
    }
}

/// Why the capture loop stopped.
public enum CaptureEndReason: Int, Sendable {
    /// A signal or the session asked it to stop.
    case stopRequested
    /// The requested number of frames (`-d`) was captured.
    case frameLimitReached
    /// The device failed or vanished (unplugged, sound server gone, stopped delivering audio).
    case deviceLost
}
