import Foundation

/// Waiting, from outside, until audio really flows into a recording.
///
/// Neither hark's start notice nor its status line says so: hark writes its header and draws
/// "REC … 0:00:00.0" before the device delivers anything, and a sound server may take a while to
/// start a stream (longer on a loaded machine, longer still under a sanitizer). A test that signals
/// a recording "once it runs" therefore waits for the output to grow, never for a guessed time.
///
/// Every wait has a deadline (30 s unless told) and throws a `TestRigError` that says what it
/// waited for and what it saw; audio that is merely late never fails a test.
///
/// A file gets its name only with its first audio (`SplittingEncoder`): before, it has none, or,
/// on a file system that cannot make a file without one, a hidden temporary name in the same
/// directory, `.NAME.hark-PID` (`OutputTarget`); the waits look at both names.
enum OutputGrowth {
    static let defaultTimeout: Double = 30

    /// Waits until the recording to `path` holds more than `bytes` bytes.
    static func waitUntil(_ path: String, exceeds bytes: Int, timeout: Double = defaultTimeout) throws {
        try waitUntil(path, holds: "more than \(bytes) bytes", timeout: timeout) { $0.count > bytes }
    }

    /// Waits until the FLAC recording (a file, or a stream written to a regular file) at `path`
    /// holds at least `seconds` of audio in complete frames (`FLACProgress`).
    static func waitForFLACAudio(_ path: String, seconds: Double, timeout: Double = defaultTimeout) throws {
        try waitUntil(path, holds: "\(seconds) s of FLAC audio", timeout: timeout) {
            (FLACProgress.seconds(in: $0) ?? 0) >= seconds
        }
    }

    /// Waits until the Ogg Opus recording at `path` holds at least `seconds` of audio in complete
    /// pages (the last page's granule position, less the pre-skip).
    static func waitForOpusAudio(_ path: String, seconds: Double, timeout: Double = defaultTimeout) throws {
        try waitUntil(path, holds: "\(seconds) s of Opus audio", timeout: timeout) {
            (OggOpusProgress.seconds(in: $0) ?? 0) >= seconds
        }
    }

    /// The file a recording to `path` is in now: `path` itself once hark has named it, else its
    /// temporary `.NAME.hark-PID`; nil before either exists.
    static func currentFile(for path: String) -> String? {
        if FileManager.default.fileExists(atPath: path) { return path }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let prefix = "." + url.lastPathComponent + ".hark-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.first { $0.hasPrefix(prefix) }.map { directory + "/" + $0 }
    }

    /// Where a process started by `startHark` (`RunningProcess`) in `rig` has its stdout: the file
    /// named `stdout-…` in the rig's directory. Only one such process may run in the rig.
    static func standardOutputFile(in rig: ALSATestRig) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: rig.directory.path)) ?? []
        return names.first { $0.hasPrefix("stdout-") }.map { rig.path($0) }
    }

    /// Polls the recording to `path` until `condition` holds for its bytes.
    static func waitUntil(_ path: String, holds what: String, timeout: Double = defaultTimeout,
                          _ condition: ([UInt8]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var seen = 0
        while true {
            if let file = currentFile(for: path), let data = FileManager.default.contents(atPath: file) {
                let bytes = [UInt8](data)
                if condition(bytes) { return }
                seen = bytes.count
            }
            guard Date() < deadline else { break }
            usleep(50_000)
        }
        throw TestRigError("\(path) did not come to hold \(what) within \(timeout) s (it holds \(seen) bytes): no audio flowed")
    }
}

/// How much audio a FLAC stream still being written holds, read from its bytes alone.
///
/// hark's FLAC streams have a fixed block size, so each frame header carries the frame's number:
/// the last frame header in the file that checks out (its CRC-8 matches) is frame `n`, and the `n`
/// frames before it are complete, so the file holds at least `n` × the block size of samples
/// (STREAMINFO gives the block size and the sample rate). The frame whose header was found may
/// still be arriving, so it is not counted.
enum FLACProgress {
    static func seconds(in bytes: [UInt8]) -> Double? {
        guard bytes.count >= 42, bytes.prefix(4).elementsEqual("fLaC".utf8) else { return nil }
        // STREAMINFO, the first metadata block: minimum block size, then (at 18) a 20-bit sample rate.
        let blockSize = Int(bytes[8]) << 8 | Int(bytes[9])
        let sampleRate = Int(bytes[18]) << 12 | Int(bytes[19]) << 4 | Int(bytes[20]) >> 4
        guard blockSize > 0, sampleRate > 0 else { return nil }
        guard let offset = firstFrameOffset(bytes) else { return nil }
        var candidate = bytes.count - 2
        while candidate >= offset {
            if bytes[candidate] == 0xFF, bytes[candidate + 1] == 0xF8, let number = frameNumber(bytes, at: candidate) {
                return Double(number * blockSize) / Double(sampleRate)
            }
            candidate -= 1
        }
        return nil
    }

    /// The frame number in a fixed-block-size frame header at `start`, if one is complete there and
    /// its CRC-8 matches (RFC 9639 §9.1).
    static func frameNumber(_ bytes: [UInt8], at start: Int) -> Int? {
        var position = start + 4
        guard position < bytes.count else { return nil }
        let blockSizeCode = bytes[start + 2] >> 4, rateCode = bytes[start + 2] & 0x0F
        let channels = bytes[start + 3] >> 4, sampleSize = (bytes[start + 3] >> 1) & 0x07
        guard blockSizeCode != 0, rateCode != 0x0F, channels <= 10, sampleSize != 3, bytes[start + 3] & 1 == 0 else { return nil }
        // The frame number, coded like UTF-8 (up to 36 bits in 7 bytes).
        let first = bytes[position]
        let length = first < 0x80 ? 1 : (~first).leadingZeroBitCount  // 10xxxxxx (1) continues, never starts
        guard first < 0x80 || (2...7).contains(length), position + length <= bytes.count else { return nil }
        var number = length == 1 ? Int(first) : Int(first) & (0x7F >> length)
        for byte in bytes[(position + 1)..<(position + length)] {
            guard byte & 0xC0 == 0x80 else { return nil }
            number = number << 6 | Int(byte & 0x3F)
        }
        position += length
        position += blockSizeCode == 6 ? 1 : blockSizeCode == 7 ? 2 : 0
        position += rateCode == 12 ? 1 : (rateCode == 13 || rateCode == 14) ? 2 : 0
        guard position < bytes.count else { return nil }
        var crc: UInt8 = 0
        for byte in bytes[start..<position] {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc == bytes[position] ? number : nil
    }
}

/// How much audio an Ogg Opus stream still being written holds: the granule position of its last
/// complete page that ends a packet, less the pre-skip from OpusHead, in 48 kHz samples.
enum OggOpusProgress {
    static func seconds(in bytes: [UInt8]) -> Double? {
        let pages = OggPage.completePages(in: bytes).pages
        guard let head = pages.first.flatMap({ OpusHead($0.body) }),
              let granule = pages.last(where: { $0.granulePosition >= 0 })?.granulePosition else { return nil }
        return Double(max(0, Int(granule) - head.preSkip)) / 48_000
    }
}
