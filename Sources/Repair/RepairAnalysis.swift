/// What a repair found in one file, and what it would write.
///
/// An analyser (`FLACRepair`, `OggOpusRepair`, `WAVRepair`) reads a file and returns one of these
/// without changing anything; `RepairWriter` carries out its plan only when asked (`--write`).
public struct RepairAnalysis: Sendable {
    public enum Container: String, Sendable {
        case flac = "FLAC"
        case oggOpus = "Ogg Opus"
        case wav = "WAV"
    }

    public enum Verdict: Sendable {
        /// Nothing to do: the file is whole and its headers describe it.
        case sound
        /// Something is wrong, and writing `plan` fixes it.
        case repairable(RepairPlan)
        /// Something is wrong that a repair cannot fix (or fixing it would hide damage); the text says what.
        case unrepairable(String)
    }

    public let container: Container
    /// What is wrong, in short phrases ("total samples unset", "a torn frame at the end (2311 bytes)").
    public let problems: [String]
    /// Audio the file holds after the repair (or now, when it is sound), in seconds.
    public let seconds: Double
    public let verdict: Verdict
}

/// The repaired file, as pieces: new bytes, and ranges of the original copied as they are.
///
/// Most repairs change a header and cut a tail, so nearly all of the file is `.original`: the
/// writer copies those ranges in the kernel, and holes in a sparse original stay holes.
public struct RepairPlan: Sendable {
    public enum Segment: Sendable {
        case bytes([UInt8])
        case original(Range<Int>)

        var count: Int {
            switch self {
            case .bytes(let bytes): bytes.count
            case .original(let range): range.count
            }
        }
    }

    public var segments: [Segment]

    public init(segments: [Segment]) {
        // Adjacent original ranges merge, so the writer copies them in one call.
        var merged: [Segment] = []
        for segment in segments where segment.count > 0 {
            if case .original(let range) = segment, case .original(let previous)? = merged.last,
               previous.upperBound == range.lowerBound {
                merged[merged.count - 1] = .original(previous.lowerBound..<range.upperBound)
            } else {
                merged.append(segment)
            }
        }
        self.segments = merged
    }

    /// Bytes in the repaired file.
    public var length: Int { segments.reduce(0) { $0 + $1.count } }

    /// Copies the repaired file's bytes `range` into `destination` (which holds `range.count`
    /// bytes), reading originals from `source`: how decoders read a plan before it is written.
    func copy(_ range: Range<Int>, from source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) {
        var segmentStart = 0
        var written = 0
        for segment in segments {
            let segmentEnd = segmentStart + segment.count
            defer { segmentStart = segmentEnd }
            let lower = max(range.lowerBound, segmentStart), upper = min(range.upperBound, segmentEnd)
            guard lower < upper else { continue }
            let inner = (lower - segmentStart)..<(upper - segmentStart)
            switch segment {
            case .bytes(let bytes):
                bytes[inner].withUnsafeBytes { destination.baseAddress!.advanced(by: written).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            case .original(let original):
                let from = source.baseAddress!.advanced(by: original.lowerBound + inner.lowerBound)
                destination.baseAddress!.advanced(by: written).copyMemory(from: from, byteCount: inner.count)
            }
            written += inner.count
        }
    }
}

/// Why a file could not be looked at or written; `kind` picks the exit code.
public struct RepairFailure: Error, Sendable {
    public enum Kind: Sendable {
        /// Missing, unreadable, not a regular file.
        case cannotOpen
        /// Damaged beyond repair.
        case cannotRepair
        /// Empty, or not FLAC, Ogg Opus or WAV by its first bytes: raw samples (`--format raw`),
        /// say, which have no header to set and nothing repair can read.
        case unrecognised
        /// The temporary file could not be made next to the original.
        case cannotCreate
        /// Writing, syncing or renaming failed; the original is untouched.
        case ioError
        /// The repaired file did not decode; the original is untouched.
        case verificationFailed
        /// A stop signal arrived while writing; the original is untouched.
        case interrupted
        /// A recorder holds the file open (a recording in progress): try again once it ends.
        case inUse
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// A stop signal ended a file's analysis (its walk, or the decode of what a repair would
    /// keep): nothing has been changed yet.
    static let interruptedAnalysis = RepairFailure(.interrupted, "interrupted; nothing changed")
}

/// "12.480 s", "1:02:03.500": a duration as the summary lines write it.
func durationText(_ seconds: Double) -> String {
    guard seconds >= 60 else { return "\(formatted(seconds, decimals: 3)) s" }
    let whole = Int(seconds)
    let fraction = seconds - Double(whole)
    let clock = whole >= 3600 ? "\(whole / 3600):\(twoDigits(whole / 60 % 60)):\(twoDigits(whole % 60))" : "\(whole / 60):\(twoDigits(whole % 60))"
    return clock + String(formatted(fraction, decimals: 3).dropFirst())
}

/// "1 byte", "28 bytes".
func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

func formatted(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    let whole = scaled / Int(scale), fraction = scaled % Int(scale)
    var fractionText = String(fraction)
    while fractionText.count < decimals { fractionText = "0" + fractionText }
    return decimals == 0 ? String(whole) : "\(whole).\(fractionText)"
}

private func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
