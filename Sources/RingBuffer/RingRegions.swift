/// Up to two contiguous stretches of ring storage, lent for one read or write.
///
/// The second region is non-empty only when the stretch wraps past the end of storage; it then
/// starts at the beginning of storage. Both hold whole frames. Valid only inside the closure
/// that received them.
public struct RingRegions {
    public let first: UnsafeMutableRawBufferPointer
    public let second: UnsafeMutableRawBufferPointer
    public let bytesPerFrame: Int

    @usableFromInline
    init(first: UnsafeMutableRawBufferPointer, second: UnsafeMutableRawBufferPointer, bytesPerFrame: Int) {
        self.first = first
        self.second = second
        self.bytesPerFrame = bytesPerFrame
    }

    /// Frames in both regions together.
    public var frameCount: Int { (first.count + second.count) / bytesPerFrame }
    public var firstFrameCount: Int { first.count / bytesPerFrame }
    public var secondFrameCount: Int { second.count / bytesPerFrame }
    public var isEmpty: Bool { first.isEmpty }
}
