import Synchronization

/// Which output's encoder thread feeds the status line's level meter: the first output still
/// taking audio.
///
/// Every output gets the same audio, so one pass of the meter over it is enough and only one
/// encoder thread measures. The first output does, until it ends early (its `--max-size`, a reader
/// gone, a full disk); the next output still running then takes over, so the levels go on moving
/// instead of freezing at the last ones the ended output saw.
///
/// The state is one word: bit `i` is set once output `i` takes no more audio, and the holder is the
/// lowest output whose bit is clear. Nothing is handed over, so there is no moment with two
/// holders, or with none while an output still runs. Outputs past the 64th never hold it.
///
/// Memory ordering: an output sets its bit (release) after its last `measure`, and the next holder
/// reads the bit (acquire) before its first, so the meter's scratch space passes from one encoder
/// thread to the next with a happens-before edge.
final class MeterBaton: Sendable {
    private let ended = Atomic<UInt64>(0)

    /// Whether output `index` feeds the meter now. Its encoder thread, once per drain.
    func isHeld(by index: Int) -> Bool {
        index < UInt64.bitWidth && (~ended.load(ordering: .acquiring)).trailingZeroBitCount == index
    }

    /// Output `index` takes no more audio and has measured for the last time. Its encoder thread.
    func outputEnded(_ index: Int) {
        guard index < UInt64.bitWidth else { return }
        ended.bitwiseOr(UInt64(1) << index, ordering: .releasing)
    }
}

/// One output's share of the level meter: it measures only while it holds the baton.
struct MeterShare: Sendable {
    let meter: LevelMeter
    let baton: MeterBaton
    /// The output's place among the session's outputs.
    let output: Int

    /// Measures a drained region (its two parts) when this output holds the meter. Encoder thread;
    /// allocates nothing.
    func measure(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) {
        guard baton.isHeld(by: output) else { return }
        meter.measure(first)
        meter.measure(second)
    }

    /// The output takes no more audio: the next one still running measures from now on.
    func outputEnded() { baton.outputEnded(output) }
}
