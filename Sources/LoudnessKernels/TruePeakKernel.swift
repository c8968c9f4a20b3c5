/// The true-peak interpolator's inner loop (`TruePeakMeter` owns the filter and the screening and
/// says why they are shaped so): one source, compiled twice, once for every x86-64 or arm64
/// processor (`Loudness`) and once for AVX2 with FMA (`LoudnessKernelsAVX2`), the arithmetic
/// chosen by `Math`.
public enum TruePeakKernel {
    /// Taps per phase and phases of the filter `largestOutput` runs. (Inlinable constants rather
    /// than `static let`s, so that the meter's loops read no lazily initialised global.)
    @inlinable public static var taps: Int { 12 }
    @inlinable public static var phases: Int { 4 }
    /// The samples before the first output that the filter reads.
    @inlinable public static var historyLength: Int { taps - 1 }

    /// The largest |output| of the four phases for the `count` samples from `line[historyLength]`
    /// on (each reading the 11 before it too), `filter` holding the 48 coefficients phase after
    /// phase, each in all lanes. Eight outputs at a time in vector lanes; each output is summed in
    /// the same order (k = 0…11, from zero) in the lanes and in the scalar tail, so its value does
    /// not depend on where a chunk starts.
    @inlinable @inline(__always)
    public static func largestOutput<Math: KernelArithmetic>(
        _ line: UnsafePointer<Float>, count: Int, filter h: UnsafePointer<SIMD8<Float>>, _ math: Math.Type
    ) -> Float {
        let newest = UnsafeRawPointer(line + historyLength)
        var largest = SIMD8<Float>()
        var n = 0
        while n + 8 <= count {
            var y0 = SIMD8<Float>(), y1 = SIMD8<Float>(), y2 = SIMD8<Float>(), y3 = SIMD8<Float>()
            for k in 0..<taps {
                let x = newest.loadUnaligned(fromByteOffset: (n - k) * 4, as: SIMD8<Float>.self)
                y0 = Math.multiplyAdd(h[k], x, y0)
                y1 = Math.multiplyAdd(h[taps + k], x, y1)
                y2 = Math.multiplyAdd(h[2 * taps + k], x, y2)
                y3 = Math.multiplyAdd(h[3 * taps + k], x, y3)
            }
            largest = lanesMax(largest, lanesMax(lanesMax(lanesAbs(y0), lanesAbs(y1)), lanesMax(lanesAbs(y2), lanesAbs(y3))))
            n += 8
        }
        var result = largestLane(largest)
        let x = line + historyLength
        while n < count {
            // One lane of the same arithmetic, so the tail rounds as the lanes do.
            var y0 = SIMD8<Float>(), y1 = SIMD8<Float>(), y2 = SIMD8<Float>(), y3 = SIMD8<Float>()
            for k in 0..<taps {
                let sample = SIMD8<Float>(repeating: x[n - k])
                y0 = Math.multiplyAdd(h[k], sample, y0)
                y1 = Math.multiplyAdd(h[taps + k], sample, y1)
                y2 = Math.multiplyAdd(h[2 * taps + k], sample, y2)
                y3 = Math.multiplyAdd(h[3 * taps + k], sample, y3)
            }
            // Two-argument `max`es: the variadic one builds an array.
            result = max(max(result, abs(y0[0])), max(max(abs(y1[0]), abs(y2[0])), abs(y3[0])))
            n += 1
        }
        return result
    }
}
