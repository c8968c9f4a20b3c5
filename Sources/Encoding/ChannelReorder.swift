import AudioFormat

/// Puts each interleaved frame's channels in the order an output format requires, in place:
/// `order[i]` is the source channel that goes `i`th (`ChannelLayout.waveOrder`,
/// `.vorbisOrder`). Allocates nothing: one frame at a time through a small scratch on the stack.
struct ChannelReorder {
    let order: [Int]

    /// Nil when `order` keeps every channel where it is: no work to do.
    init?(_ order: [Int]?) {
        guard let order, order != Array(order.indices) else { return nil }
        self.order = order
    }

    /// Reorders `frames` frames of `order.count` interleaved samples in place.
    func apply<Sample>(_ samples: UnsafeMutablePointer<Sample>, frames: Int) {
        let channels = order.count
        withUnsafeTemporaryAllocation(of: Sample.self, capacity: channels) { frame in
            for start in stride(from: 0, to: frames * channels, by: channels) {
                for channel in 0..<channels { frame.initializeElement(at: channel, to: samples[start + order[channel]]) }
                for channel in 0..<channels { samples[start + channel] = frame.moveElement(from: channel) }
            }
        }
    }
}
