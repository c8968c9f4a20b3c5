/// Copying conveniences over the zero-copy region API, for callers that hold their own buffers
/// (tests, benchmarks, and the capture thread's overflow path). Real-time safe: no allocation.
extension FrameRingBuffer {
    /// Copies as many whole frames of `source` as fit; returns the number of frames written.
    @inlinable
    public func write(from source: UnsafeRawBufferPointer) -> Int {
        withWritableRegions(maxFrames: source.count / bytesPerFrame) { regions in
            // Raw pointer copies: the regions are sized from `source.count`, so the slicing checks
            // of buffer-pointer copies would only repeat what the ring already guarantees.
            let split = regions.first.count
            if split > 0 {
                regions.first.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: split)
            }
            if !regions.second.isEmpty {
                regions.second.baseAddress!.copyMemory(from: source.baseAddress! + split, byteCount: regions.second.count)
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
                destination.baseAddress!.copyMemory(from: regions.first.baseAddress!, byteCount: split)
            }
            if !regions.second.isEmpty {
                (destination.baseAddress! + split).copyMemory(from: regions.second.baseAddress!, byteCount: regions.second.count)
            }
            return regions.frameCount
        }
    }
}
