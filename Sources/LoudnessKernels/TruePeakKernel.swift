/// The true-peak interpolator's inner loop (`TruePeakMeter` owns the filter and the screening and
/// says why they are shaped so): one source, compiled twice, once for every x86-64 or arm64
/// processor (`Loudness`) and once for AVX2 with FMA (`LoudnessKernelsAVX2`), the arithmetic
/// chosen by `Math`.
///
/// The four phases come in mirrored pairs (phase 3 is phase 0 reversed, phase 2 is phase 1
/// reversed), and only the larger magnitude of each pair's two outputs matters. For a pair with
/// taps h[0…11] and h[11…0], y = Σ h[k]·x[n−k] and y′ = Σ h[11−k]·x[n−k], so with
/// s_k = x[n−k] + x[n−11+k] and d_k = x[n−k] − x[n−11+k] (k = 0…5),
/// (y + y′)/2 = Σ e_k·s_k and (y − y′)/2 = Σ f_k·d_k, where e_k = (h[k] + h[11−k])/2 and
/// f_k = (h[k] − h[11−k])/2; and max(|y|, |y′|) = |(y + y′)/2| + |(y − y′)/2|. That is 12
/// multiply-adds, 6 additions and 6 subtractions per pair, 24 multiply-adds for both where the
/// phases written out take 48, for outputs equal to the phases' up to rounding.
public enum TruePeakKernel {
    /// Taps per phase and phases of the filter. (Inlinable constants rather than `static let`s, so
    /// that the meter's loops read no lazily initialised global.)
    @inlinable public static var taps: Int { 12 }
    @inlinable public static var phases: Int { 4 }
    /// The samples before the first output that the filter reads.
    @inlinable public static var historyLength: Int { taps - 1 }
    /// The vectors `largestOutput`'s `filter` holds: for the pair (0, 3) its six e_k then its six
    /// f_k, then the same for the pair (1, 2).
    @inlinable public static var foldedTaps: Int { 2 * taps }

    /// The folded filter (see the type's comment) of `coefficients`, the four phases' taps
    /// (`coefficients[p][k]` multiplying the sample k before the output's), each value in all
    /// lanes: `foldedTaps` vectors. Halving a multiple of 2^-13 is exact, and so are the sums and
    /// differences of BS.1770's coefficients (multiples of 2^-13 below 1), so e_k and f_k are the
    /// exact values. Phases 3 and 2 must be phases 0 and 1 reversed.
    public static func foldedFilter(_ coefficients: [[Float]], into filter: UnsafeMutablePointer<SIMD8<Float>>) {
        precondition(coefficients.count == phases && coefficients.allSatisfy { $0.count == taps })
        precondition(coefficients[3] == coefficients[0].reversed() && coefficients[2] == coefficients[1].reversed())
        let half = taps / 2
        for (pair, h) in [coefficients[0], coefficients[1]].enumerated() {
            for k in 0..<half {
                filter[pair * taps + k] = SIMD8(repeating: (h[k] + h[taps - 1 - k]) / 2)
                filter[pair * taps + half + k] = SIMD8(repeating: (h[k] - h[taps - 1 - k]) / 2)
            }
        }
    }

    /// The largest |output| of the four phases for the `count` samples from
    /// `line[historyLength × stride]` on, each reading the 11 samples `stride`, 2·`stride`, …
    /// before it: `line` is interleaved audio of `stride` channels, which the filter runs on as it
    /// is (an output's taps are its own channel's samples). `filter` is `foldedFilter`'s.
    ///
    /// Eight outputs at a time in vector lanes, one mirrored pair of phases after the other: both
    /// pairs at once needed more SSE registers than there are (the portable build ran 8 % slower
    /// than with the phases written out; the AVX2 build ran as fast either way), so the pair's sums
    /// and differences are formed twice. `pairs` takes both pairs before `largest` does: folding
    /// each pair straight into `largest` ran the portable build 20 % slower (0.279 against 0.233 ms
    /// per second of stereo for the whole meter). Each output is computed in the same order in the
    /// lanes and in the scalar tail, so its value does not depend on where a run starts.
    @inlinable @inline(__always)
    public static func largestOutput<Math: KernelArithmetic>(
        _ line: UnsafePointer<Float>, count: Int, stride: Int, filter h: UnsafePointer<SIMD8<Float>>, _ math: Math.Type
    ) -> Float {
        let half = taps / 2
        let newest = UnsafeRawPointer(line + historyLength * stride)
        let step = 4 * stride
        var largest = SIMD8<Float>()
        var n = 0
        while n + 8 <= count {
            let output = newest + 4 &* n
            var pairs = SIMD8<Float>()
            for pair in 0..<2 {
                let c = h + pair &* taps
                var e = SIMD8<Float>(), f = SIMD8<Float>()
                // Taps k and 11 − k. Written out six times below: as a loop, the compiler kept it
                // rolled and split the vectors into lanes (twice the time).
                @inline(__always) func tap(_ k: Int) {
                    let recent = output.loadUnaligned(fromByteOffset: -(k &* step), as: SIMD8<Float>.self)
                    let early = output.loadUnaligned(fromByteOffset: -((taps - 1 - k) &* step), as: SIMD8<Float>.self)
                    e = Math.multiplyAdd(c[k], recent + early, e)
                    f = Math.multiplyAdd(c[half + k], recent - early, f)
                }
                tap(0); tap(1); tap(2); tap(3); tap(4); tap(5)
                pairs = lanesMax(pairs, lanesAbs(e) + lanesAbs(f))
            }
            largest = lanesMax(largest, pairs)
            n += 8
        }
        var result = largestLane(largest)
        let x = line + historyLength * stride
        while n < count {
            // One lane of the same arithmetic, so the tail rounds as the lanes do.
            for pair in 0..<2 {
                let c = h + pair &* taps
                var e = SIMD8<Float>(), f = SIMD8<Float>()
                for k in 0..<half {
                    let recent = SIMD8<Float>(repeating: x[n - k * stride])
                    let early = SIMD8<Float>(repeating: x[n - (taps - 1 - k) * stride])
                    e = Math.multiplyAdd(c[k], recent + early, e)
                    f = Math.multiplyAdd(c[half + k], recent - early, f)
                }
                result = max(result, abs(e[0]) + abs(f[0]))
            }
            n += 1
        }
        return result
    }
}
