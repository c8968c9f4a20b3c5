/// A stop signal looked for as a walk through a file moves on: once per mebibyte of progress (and
/// at the start), so a Ctrl-C ends the check of a file of gigabytes within a few milliseconds of
/// work, and a sound file pays one `sigpending` per mebibyte.
///
/// Progress, not steps: a walk's work is linear in how far it has got (the searches through
/// damage judge each candidate in a few steps), so a mebibyte of progress bounds the work between
/// two looks.
struct WalkStopCheck {
    /// Bytes of progress between two looks.
    static let stride = 1 << 20

    private let shouldStop: () -> Bool
    /// Where the next look is due: a search that jumps ahead (for a capture pattern) goes no further
    /// in one step.
    private(set) var nextLook: Int

    /// Looks first at `start`, where the walk begins.
    init(from start: Int, shouldStop: @escaping () -> Bool) {
        self.shouldStop = shouldStop
        nextLook = start
    }

    /// Throws `RepairFailure.interruptedAnalysis` when the walk, now at `position`, has passed the
    /// next look and a stop signal waits.
    mutating func check(at position: Int) throws(RepairFailure) {
        guard position >= nextLook else { return }
        nextLook = position + Self.stride
        if shouldStop() { throw .interruptedAnalysis }
    }
}
