import Capture
import Testing

/// The schedule of SIGUSR1 splits between the capture thread (which chooses each one's frame) and
/// an output's encoder thread: first in, first out, and the first two readable without taking
/// them (`--max-size` bounds a drain by the second file start ahead).
@Suite struct SplitScheduleTests {
    @Test func theFirstTwoSplitsAreSeenInOrderWithoutBeingTaken() {
        let schedule = SplitSchedule(capacity: 4)
        #expect(schedule.next == nil && schedule.second == nil)
        #expect(schedule.schedule(atFrame: 100))
        #expect(schedule.next == 100 && schedule.second == nil)
        // Round the ring's end several times, so the second is found in either region.
        var scheduled = [100]
        for frame in stride(from: 200, through: 1_600, by: 100) {
            #expect(schedule.schedule(atFrame: frame))
            scheduled.append(frame)
            #expect(schedule.next == scheduled[0] && schedule.second == scheduled[1], "\(scheduled)")
            #expect(schedule.next == scheduled[0], "looking does not take")
            schedule.removeNext()
            scheduled.removeFirst()
        }
        #expect(schedule.next == 1_600 && schedule.second == nil)
        schedule.removeNext()
        #expect(schedule.next == nil)
    }
}
