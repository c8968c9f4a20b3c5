import Capture
import Realtime
import Testing

/// The schedule of silence gaps between the capture thread (which finds losses) and the encoder
/// thread (which encodes the silence): first in, first out, bounded, and safe across two threads.
@Suite struct SilenceScheduleTests {
    @Test func gapsComeOutInTheOrderTheyWereScheduled() {
        let schedule = SilenceSchedule(capacity: 4)
        #expect(schedule.next == nil)
        for position in [0, 100, 100, 5000] {
            #expect(schedule.schedule(.init(position: position, frames: position + 1)))
        }
        for position in [0, 100, 100, 5000] {
            // `next` leaves the gap in place until it is removed.
            #expect(schedule.next == .init(position: position, frames: position + 1))
            #expect(schedule.next == .init(position: position, frames: position + 1))
            schedule.removeNext()
        }
        #expect(schedule.next == nil)
    }

    @Test func aFullScheduleRefusesTheNextGapAndKeepsTheOthers() {
        let schedule = SilenceSchedule(capacity: 2)
        #expect(schedule.schedule(.init(position: 1, frames: 10)))
        #expect(schedule.schedule(.init(position: 2, frames: 20)))
        #expect(!schedule.schedule(.init(position: 3, frames: 30)))
        schedule.removeNext()
        #expect(schedule.schedule(.init(position: 3, frames: 30)))
        #expect(schedule.next == .init(position: 2, frames: 20))
    }

    /// Two threads, 200,000 gaps through a schedule of 8: every gap arrives once, in order, whole
    /// (a torn read would pair one gap's position with another's length).
    /// (Threads of their own: spinning on the concurrency pool's few threads could starve it.)
    @Test func everyGapCrossesBetweenTwoThreadsWhole() throws {
        let schedule = SilenceSchedule(capacity: 8)
        let count = 200_000
        let producer = try PosixThread(name: "gap-producer") {
            var position = 0
            while position < count {
                if schedule.schedule(.init(position: position, frames: 3 * position + 1)) { position += 1 }
            }
        }
        var received = 0
        var intact = true
        while received < count {
            guard let gap = schedule.next else { continue }
            intact = intact && gap == .init(position: received, frames: 3 * received + 1)
            schedule.removeNext()
            received += 1
        }
        producer.join()
        #expect(intact)
        #expect(schedule.next == nil)
    }
}
