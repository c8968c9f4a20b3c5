import Capture
import Testing

/// The timeline guard on synthetic sources: a steady one, one with jitter and clock drift, one
/// that loses audio, and one that hands over a backlog after a stall without losing anything.
@Suite struct TimelineGuardTests {
    static let rate = 48_000
    static let period = 6_000  // 125 ms

    /// A source that delivers one period every 125 ms, `latency` frames late, observed just after
    /// each delivery. Returns everything the guard reported.
    static func run(
        seconds: Int, latency: Int = 2_400, jitter: (Int) -> Int = { _ in 0 }, ppm: Double = 0,
        lose: (atPeriod: Int, frames: Int)? = nil, backlog: (atPeriod: Int, periods: Int)? = nil
    ) -> [Int] {
        var timeline = TimelineGuard(rate: rate, periodFrames: period)
        var accounted = 0
        var reports: [Int] = []
        let periods = seconds * rate / period
        var held = 0  // periods a stalled source is holding back
        for index in 1...periods {
            // The source's clock runs `ppm` fast or slow against the system clock.
            let sourceTime = Double(index * period + latency + jitter(index)) / Double(rate)
            let elapsed = Int(sourceTime * (1 + ppm / 1_000_000) * 1e9)
            var delivered = period
            if let lose, index == lose.atPeriod { delivered = period - lose.frames }
            if let backlog, index >= backlog.atPeriod, index < backlog.atPeriod + backlog.periods {
                held += 1
                delivered = 0
            } else if held > 0 {
                delivered += held * period  // the whole backlog at once, as after a SIGCONT
                held = 0
            }
            accounted += delivered
            let missing = timeline.observeCaughtUp(elapsedNanoseconds: elapsed, accounted: accounted)
            if missing > 0 {
                reports.append(missing)
                accounted += missing
            }
        }
        return reports
    }

    @Test func aSteadySourceLosesNothing() {
        #expect(Self.run(seconds: 600).isEmpty)
    }

    @Test func deliveryJitterOfAPeriodIsNotALoss() {
        #expect(Self.run(seconds: 600, jitter: { ($0 * 7_919) % Self.period }).isEmpty)
    }

    @Test(arguments: [-200.0, 200.0])
    func clockDriftOfHundredsOfPartsPerMillionOverThreeHoursIsNotALoss(ppm: Double) {
        #expect(Self.run(seconds: 3 * 3600, ppm: ppm).isEmpty)
    }

    @Test func aLostSecondIsReportedOnceAndExactly() {
        // A period that should have carried 54,000 frames more (1.125 s) arrived short: the
        // frames the source skipped show up as a step in the timeline.
        var timeline = TimelineGuard(rate: Self.rate, periodFrames: Self.period)
        var accounted = 0
        var reports: [Int] = []
        for index in 1...400 {
            let elapsed = (index * Self.period + 2_400) * 1_000_000_000 / Self.rate
            accounted += index == 100 ? Self.period - 54_000 : Self.period
            let missing = timeline.observeCaughtUp(elapsedNanoseconds: elapsed, accounted: accounted)
            if missing > 0 { reports.append(missing); accounted += missing }
        }
        #expect(reports == [54_000])
    }

    @Test func aBacklogHandedOverAfterAStallIsNotALoss() {
        // Three seconds held back, then delivered in one go: nothing was lost.
        #expect(Self.run(seconds: 60, backlog: (atPeriod: 80, periods: 24)).isEmpty)
    }

    @Test func smallLossesAddUpUntilTheyAreReported() {
        var timeline = TimelineGuard(rate: Self.rate, periodFrames: Self.period)
        var accounted = 0
        var reported = 0
        var lost = 0
        for index in 1...800 {
            let elapsed = (index * Self.period + 2_400) * 1_000_000_000 / Self.rate
            // 1,000 frames (21 ms) go missing every 4th period: each too small to tell from jitter,
            // together 200,000 frames in 100 s.
            let short = index % 4 == 0 ? 1_000 : 0
            lost += short
            accounted += Self.period - short
            let missing = timeline.observeCaughtUp(elapsedNanoseconds: elapsed, accounted: accounted)
            reported += missing
            accounted += missing
        }
        // Reported in steps over the threshold, never more than was lost; what is not reported is
        // less than the threshold plus what the floor's 5–10 s memory treats as clock drift.
        #expect(reported <= lost && reported >= lost / 2, "reported \(reported) of \(lost)")
    }

    @Test func thresholdIsTwoPeriodsButNeverUnder100Milliseconds() {
        #expect(TimelineGuard(rate: 48_000, periodFrames: 6_000).thresholdFrames == 12_000)
        #expect(TimelineGuard(rate: 48_000, periodFrames: 480).thresholdFrames == 4_800)
    }
}
