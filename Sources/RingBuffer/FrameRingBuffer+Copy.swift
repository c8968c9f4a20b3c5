/// Copying conveniences over the zero-copy region API, for callers that hold their own buffers
/// (tests, benchmarks, and the capture thread's overflow path). Real-time safe: no allocation.
extension FrameRingBuffer {
    /// Copies as many whole frames of `source` as fit; returns the number of frames written.
    @inlinable
    public func write(from source: UnsafeRawBufferPointer) -> Int {
        withWritableRegions(maxFrames: source.count / bytesPerFrame) { regions in
            let split = regions.first.count
            if split > 0 {
                regions.first.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<split]))
            }
            if !regions.second.isEmpty {
                regions.second.copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: source[split..<split + regions.second.count]))
            }
            return regions.frameCount
        }
    }

    /// Copies up to `destination.count / bytesPerFrame` frames out; returns the number of frames read.
    @inlinable
    public func read(into destination: UnsafeMutableRawBufferPointer) -> Int {
        withReadableRegions(maxFrames: destination.count / bytesPerFrame) { regions in
            let split = regions.first.count
            if split > 0 {
                UnsafeMutableRawBufferPointer(rebasing: destination[0..<split])
                    .copyMemory(from: UnsafeRawBufferPointer(regions.first))
            }
            if !regions.second.isEmpty {
                UnsafeMutableRawBufferPointer(rebasing: destination[split..<split + regions.second.count])
                    .copyMemory(from: UnsafeRawBufferPointer(regions.second))
            }
            return regions.frameCount
        }
    }
}
