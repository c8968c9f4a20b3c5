/// Notices audio a source lost without saying so.
///
/// A hardware device that overruns reports it (-EPIPE), but a sound server does not: PulseAudio
/// buffers a stalled client's audio for a while and then silently throws the oldest away. The
/// only trace is in the timeline: the source's frames stop adding up to the time that passed.
///
/// The guard compares, at moments when the capture thread has read everything the source had
/// (a read found nothing, so nothing is buffered on the client side), the frames accounted for
/// (delivered plus already-reported losses) with the frames the monotonic clock says were due:
///
///     deficit = elapsed time × rate − accounted frames
///
/// While nothing is lost the deficit only wobbles by the source's delivery granularity (about one
/// period) above a floor set by its latency. The floor is the smallest deficit of the last 5–10 s
/// (two buckets of 5 s), so slow clock drift between the device's crystal and the system clock,
/// tens of parts per million, moves the floor along instead of looking like a loss. A loss is a
/// step: the deficit jumps above the floor by more than the threshold and stays there.
///
/// "Stays there" matters: right after a stall the source may still be handing over its backlog
/// (PulseAudio's client thread catches up a fragment at a time), so the deficit is high for a
/// moment although nothing is lost. A step is reported only when it is seen again, unchanged
/// within a period, at a later caught-up moment at least two periods after it was first seen,
/// with fresh frames delivered in between. The report therefore lands up to a few periods after
/// the audio went missing, which is also where `--pad-overruns` puts its silence.
///
/// Losses smaller than the threshold are not reported one by one; they lift the deficit and are
/// reported together once their sum crosses it. Value type, no allocation: it runs on the capture
/// thread.
public struct TimelineGuard: Sendable {
    /// Frames per second of the source.
    public let rate: Int
    /// Smallest step reported as a loss, in frames.
    public let thresholdFrames: Int
    /// How long a step must persist before it is reported, in nanoseconds.
    public let confirmationNanoseconds: Int
    /// Frames per period; a step that moved by more than this between sightings is not settled.
    public let periodFrames: Int

    private static let bucketNanoseconds = 5_000_000_000

    private var floorOfCurrentBucket = Int.max
    private var floorOfPreviousBucket = Int.max
    private var currentBucketStart = 0
    private var candidate: (deficit: Int, seenAt: Int, accounted: Int)?
    /// The lowest deficit of the bucket being filled, of the first complete bucket, and of the
    /// latest complete one, each with when it was seen: the floor's slope is the clock drift.
    private var lowestInCurrentBucket: (deficit: Int, at: Int)?
    private var lowestInFirstBucket: (deficit: Int, at: Int)?
    private var lowestInLatestBucket: (deficit: Int, at: Int)?

    /// A guard for a source of `rate` frames per second delivering `periodFrames` at a time.
    /// The threshold is two periods, and never under 100 ms: less is indistinguishable from
    /// delivery jitter on a loaded machine.
    public init(rate: Int, periodFrames: Int) {
        precondition(rate > 0 && periodFrames > 0, "rate and period must be positive")
        self.rate = rate
        self.periodFrames = periodFrames
        self.thresholdFrames = max(2 * periodFrames, rate / 10)
        self.confirmationNanoseconds = max(2 * periodFrames * 1_000_000_000 / rate, 100_000_000)
    }

    /// How far the last caught-up moment's deficit stood above the floor, in frames (0 before
    /// there is a floor): what a step would be reported as.
    public private(set) var lastRise = 0

    /// Records a caught-up moment `elapsedNanoseconds` after the source started, with `accounted`
    /// frames delivered or already reported lost. Returns the frames newly found missing (0 when
    /// none). The caller must add what it reports to `accounted` from then on.
    public mutating func observeCaughtUp(elapsedNanoseconds: Int, accounted: Int) -> Int {
        // The timeline starts with the first audio: a sound server can take a second or two to
        // deliver anything (an idle PulseAudio sink wakes up), and that is late, not lost.
        guard accounted > 0 else { return 0 }
        let due = elapsedNanoseconds / 1000 * rate / 1_000_000
        let deficit = due - accounted
        rollBuckets(now: elapsedNanoseconds)
        if deficit < lowestInCurrentBucket?.deficit ?? Int.max { lowestInCurrentBucket = (deficit, elapsedNanoseconds) }
        let floor = min(floorOfCurrentBucket, floorOfPreviousBucket)
        lastRise = floor == Int.max ? 0 : deficit - floor
        guard floor != Int.max, deficit - floor > thresholdFrames else {
            candidate = nil
            floorOfCurrentBucket = min(floorOfCurrentBucket, deficit)
            return 0
        }
        // A step: report it only once it has settled.
        guard let seen = candidate,
              abs(deficit - seen.deficit) <= periodFrames,
              accounted > seen.accounted
        else {
            candidate = (deficit, elapsedNanoseconds, accounted)
            return 0
        }
        guard elapsedNanoseconds - seen.seenAt >= confirmationNanoseconds else { return 0 }
        candidate = nil
        return deficit - floor
    }

    /// Takes a step `observeCaughtUp` just reported, of `frames`, as latency the source added
    /// rather than audio it lost (its own latency report grew by as much; see `CaptureLoop`): the
    /// floor is raised by it, so the deficit is not measured against the old level again. The
    /// drift is then measured afresh from the next complete bucket: the floor's old positions are
    /// from before the step.
    public mutating func acceptLatencyStep(frames: Int) {
        if floorOfCurrentBucket != Int.max { floorOfCurrentBucket += frames }
        if floorOfPreviousBucket != Int.max { floorOfPreviousBucket += frames }
        candidate = nil
        lowestInCurrentBucket = nil
        lowestInFirstBucket = nil
        lowestInLatestBucket = nil
    }

    /// The source's clock against the monotonic clock, in parts per billion (positive: the source
    /// delivers more frames per second than its nominal rate), from how the deficit's floor moved
    /// between the first and the latest complete 5 s bucket; nil until they are 5 s apart.
    ///
    /// The floor is the least latency the source showed in a bucket, so delivery jitter (a period
    /// or so) hardly touches it, where two single readings would each carry it. Losses do not
    /// move it either: they are added to `accounted`. Good to the floor's steadiness over the span:
    /// a millisecond is ±200 ppm over 5 s and ±0.3 ppm over an hour; through PulseAudio the floor
    /// moves by more (docs/usage.md gives figures).
    public var driftPartsPerBillion: Int? {
        guard let first = lowestInFirstBucket, let latest = lowestInLatestBucket,
              latest.at - first.at >= Self.bucketNanoseconds else { return nil }
        // The deficit falls as a fast source delivers more than was due.
        let gained = Double(first.deficit - latest.deficit)
        let due = Double(latest.at - first.at) / 1e9 * Double(rate)
        return Int((gained / due * 1e9).rounded())
    }

    /// Starts a new bucket every 5 s, forgetting the floor of the one before the last.
    private mutating func rollBuckets(now: Int) {
        guard now - currentBucketStart >= Self.bucketNanoseconds else { return }
        if let lowest = lowestInCurrentBucket {
            if lowestInFirstBucket == nil { lowestInFirstBucket = lowest } else { lowestInLatestBucket = lowest }
        }
        lowestInCurrentBucket = nil
        floorOfPreviousBucket = floorOfCurrentBucket
        floorOfCurrentBucket = Int.max
        currentBucketStart = now
    }
}
