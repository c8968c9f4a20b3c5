import AudioFormat
import Foundation
import Testing

/// The live seek table: a seekable FLAC file gets a SEEKTABLE with a point about every 10 s, each
/// naming the frame it claims (checked against the file's bytes), and seeking with it returns
/// exactly the input; a pipe gets none; a file cut short by a full disk keeps only points inside it.
@Suite struct SeekTableTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    /// libFLAC's block size at the default compression level (5).
    static let blockSize = 4096

    /// The first sample of the frame holding `seconds`: where a point for that time lands.
    static func frameStart(seconds: Int) -> Int { seconds * 48_000 / blockSize * blockSize }

    @Test func aFileHasASeekPointEveryTenSecondsAndSeeksBitExact() throws {
        let signal = TestSignal(format: Self.format, frames: 35 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("long.flac")
        let result = try runHark(["record", "-D", "filecap", "-d", "35", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)

        let table = try #require(try SeekTableListing.read(output), "no SEEKTABLE")
        #expect(table.points.map(\.sampleNumber) == [0, 10, 20, 30].map(Self.frameStart), "\(table.points)")
        #expect(table.points.allSatisfy { $0.frameSamples == Self.blockSize })
        // -d 35 reserves points for 0, 10, 20 and 30 s: all used, none wasted.
        #expect(table.placeholders == 0)
        try expectSeekPointsNameTheirFrames(output, table)

        // A seek into the middle of a frame: 20 s + 1234 samples, then 1.5 s.
        let start = 20 * 48_000 + 1234
        let window = start..<(start + 72_000)
        let decoded = try FLACTools.decode(output, bitsPerSample: 16, from: window)
        let expected = Array(signal.samples[(window.lowerBound * 2)..<(window.upperBound * 2)])
        expectSameElements(decoded, expected)
    }

    @Test func withoutADurationAnHourOfPointsIsReservedAndTheUnusedOnesStayPlaceholders() throws {
        let signal = TestSignal(format: Self.format, frames: 8 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("open-ended.flac")
        // No -d: the length is unknown until the stop signal.
        let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        recording.send(SIGINT)
        let result = recording.wait(timeout: 30)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
        let table = try #require(try SeekTableListing.read(output))
        #expect(table.points.count + table.placeholders == 360, "an hour at 10 s")
        #expect(table.points.map(\.sampleNumber) == [0], "under 10 s recorded: \(table.points)")
        try expectSeekPointsNameTheirFrames(output, table)
    }

    @Test func standardOutputToAPipeHasNoSeekTableAndStaysValid() throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("piped.flac")
        let result = try runTool("bash", ["-c", harkCommand(["record", "-D", "filecap", "-d", "12", "-o", "-"])
            + " 2> /dev/null | cat > \(shellQuoted(output)); exit ${PIPESTATUS[0]}"], environment: rig.environment)
        #expect(result.status == 0)
        #expect(try SeekTableListing.read(output) == nil, "a pipe cannot be rewound to fill a seek table in")
        #expect(try FLACTools.test(output).status == 0)
        try expectSameElements(FLACTools.decode(output, bitsPerSample: 16), signal.samples)
    }

    @Test func standardOutputRedirectedToAFileGetsOneLikeAFile() throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        // runHark's stdout is a regular file: seekable, so STREAMINFO and the seek table are finished there.
        let result = try runHark(["record", "-D", "filecap", "-d", "12", "-o", "-"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let output = rig.path("redirected.flac")
        try result.standardOutput.write(to: URL(fileURLWithPath: output))
        let table = try #require(try SeekTableListing.read(output))
        #expect(table.points.map(\.sampleNumber) == [0, 10].map(Self.frameStart))
        try expectSeekPointsNameTheirFrames(output, table)
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func aFullDiskKeepsOnlySeekPointsInsideTheSalvagedFile() throws {
        let signal = TestSignal(format: Self.format, frames: 60 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("salvaged.flac")
        // 5 MiB holds about 27 s of this signal's FLAC: points for 0, 10 and 20 s fit, 30–50 s do not.
        try rig.withSmallDisk(size: "5m") { mountPoint in
            let result = try runHark(["record", "-D", "filecap", "-d", "60", "-o", mountPoint + "/full.flac"], rig: rig)
            #expect(result.status == 74, "\(result.standardError)")
            try FileManager.default.copyItem(atPath: mountPoint + "/full.flac", toPath: output)
        }

        #expect(try FLACTools.test(output).status == 0)
        let total = try #require(try FLACTools.totalSamples(output))
        let table = try #require(try SeekTableListing.read(output))
        #expect(table.points.count >= 3 && table.points.count + table.placeholders == 6, "\(table.points)")
        #expect(table.points.map(\.sampleNumber) == (0..<table.points.count).map { Self.frameStart(seconds: 10 * $0) })
        try expectSeekPointsNameTheirFrames(output, table)
        // Seeking still works in what is left.
        let start = 20 * 48_000 + 1234
        let window = start..<min(start + 48_000, total)
        let decoded = try FLACTools.decode(output, bitsPerSample: 16, from: window)
        expectSameElements(decoded[...], signal.samples[(window.lowerBound * 2)..<(window.upperBound * 2)])
    }
}
