#if DEBUG
import Realtime
#if canImport(Glibc)
import Glibc
#endif

/// Debug builds only: device faults the test rig cannot produce, injected at the `snd_pcm_readi`
/// seam (STYLE: "a seam tests can mock in debug builds"). Without a sound card nothing overruns
/// for real — PulseAudio's ALSA plugin never reports a capture overrun, it drops audio silently —
/// yet the recovery around those faults (`snd_pcm_prepare`, `snd_pcm_resume`, `snd_pcm_start` on
/// the real PCM), their counting and padding must be tested.
///
/// `HARK_DEBUG_CAPTURE_FAULTS` lists faults by the frame count at which they strike:
///
///     overrun@96000+12000     after 96000 frames: the next 12000 frames are lost, then -EPIPE
///     suspend@192000          after 192000 frames: -ESTRPIPE (nothing lost)
///     late@3000               the source gives nothing for 3000 ms after the first read, as an
///                             idle sound-server source takes 1–2 s to deliver its first sample
///
/// separated by commas. Parsed once when the device opens; the capture thread only compares
/// integers and reads an array it never resizes, so the hot path stays allocation-free.
struct CaptureFaultInjection {
    enum Fault: Equatable {
        case overrun(lostFrames: Int)
        case suspend
    }

    private let faults: [(atFrame: Int, fault: Fault)]
    /// `late@MS`, in nanoseconds (0: none), and when the first read asked (0: not yet).
    private let lateStartNanoseconds: Int
    private var firstReadTime = 0
    private var nextIndex = 0
    /// Frames the source has delivered so far (including those an injected overrun threw away).
    private var framesDelivered = 0
    /// The loss of the injected overrun being recovered from, for `takeInjectedLoss()`.
    private var pendingLoss: Int?

    init(environment name: String = "HARK_DEBUG_CAPTURE_FAULTS") {
        guard let value = getenv(name) else {
            faults = []
            lateStartNanoseconds = 0
            return
        }
        let parts = String(cString: value).split(separator: ",")
        faults = parts.compactMap(Self.parse).sorted { $0.atFrame < $1.atFrame }
        lateStartNanoseconds = parts.lazy.compactMap { $0.hasPrefix("late@") ? Int($0.dropFirst(5)) : nil }.first.map { $0 * 1_000_000 } ?? 0
    }

    /// Whether the source is still holding its first sample back (`late@MS`): the read then gives
    /// nothing, after a short sleep, so the capture thread's wait does not spin.
    mutating func holdsBackTheFirstSample() -> Bool {
        guard lateStartNanoseconds > 0 else { return false }
        let now = MonotonicClock.nanoseconds()
        if firstReadTime == 0 { firstReadTime = now }
        guard now < firstReadTime + lateStartNanoseconds else { return false }
        MonotonicClock.sleep(nanoseconds: 10_000_000)
        return true
    }

    private static func parse(_ text: Substring) -> (atFrame: Int, fault: Fault)? {
        let parts = text.split(separator: "@")
        guard parts.count == 2 else { return nil }
        switch parts[0] {
        case "overrun":
            let numbers = parts[1].split(separator: "+").compactMap { Int($0) }
            guard numbers.count == 2 else { return nil }
            return (numbers[0], .overrun(lostFrames: numbers[1]))
        case "suspend":
            return Int(parts[1]).map { ($0, .suspend) }
        default:
            return nil
        }
    }

    var isEmpty: Bool { faults.isEmpty && lateStartNanoseconds == 0 }

    /// The fault due before reading on from `framesDelivered`, if any; consumes it.
    mutating func takeDueFault() -> Fault? {
        guard nextIndex < faults.count, framesDelivered >= faults[nextIndex].atFrame else { return nil }
        defer { nextIndex += 1 }
        let fault = faults[nextIndex].fault
        if case .overrun(let lost) = fault { pendingLoss = lost }
        return fault
    }

    mutating func delivered(_ frames: Int) { framesDelivered += frames }

    /// At most this many frames may be read before the next fault strikes, so it strikes at its
    /// exact frame whatever the read sizes (the ring's wrap shortens some).
    func framesBeforeNextFault(limit: Int) -> Int {
        guard nextIndex < faults.count else { return limit }
        return max(0, min(limit, faults[nextIndex].atFrame - framesDelivered))
    }

    /// The loss of an injected overrun, once: what `snd_pcm_status` would have measured.
    mutating func takeInjectedLoss() -> Int? {
        defer { pendingLoss = nil }
        return pendingLoss
    }
}
#endif
