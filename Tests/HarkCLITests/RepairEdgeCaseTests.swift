import AudioFormat
import Foundation
import Testing

/// `hark repair` on files a user's collection holds besides hark's own: an MP3, a compressed WAV, a file reached through a symbolic link, and one its owner
/// made read-only; and an Ogg Opus file whose tags page alone is damaged.
@Suite struct RepairEdgeCaseTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// hark rewrites an Opus file's OpusTags page in place when a recording ends (its loudness and
    /// first sample's time), so a power cut can leave that page damaged with every audio page whole.
    /// The audio is kept under a fresh, empty OpusTags page (the tags are lost), and decodes as
    /// before; opusdec and ffmpeg refuse the damaged file.
    @Test func anOpusFileWhoseTagsPageIsDamagedKeepsItsAudio() throws {
        let signal = TestSignal(format: Self.format, frames: 4 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let opus = rig.path("tags.opus")
        let recorded = try runHark(["record", "-D", "filecap", "-d", "3", "--title", "Standup", "-o", opus], rig: rig)
        #expect(recorded.status == 0, "\(recorded.standardError)")
        let before = try OpusTools.decode(opus).samples
        let tags = try #require(RepairTools.bytes(opus).range(of: Data("OpusTags".utf8))).lowerBound
        try RepairTools.flipBit(opus, at: tags + 300)
        let result = try RepairTools.repair(["--write", opus], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains("OpusTags"), "\(result.standardError)")
        let info = try OpusTools.info(opus)
        #expect(info.isClean, "\(info.text)")
        #expect(try !OpusTools.tags(opus).comments.contains { $0.hasPrefix("TITLE=") }, "the damaged tags are not carried over")
        try expectSameElements(OpusTools.decode(opus).samples, before, "the audio as it was")
        #expect(try RepairTools.repair([opus], rig: rig).status == 0, "a repaired file needs nothing more")
    }

    /// Damage inside a 5.1 Opus recording of 10 ms frames (RFC 7845 family 1: four elementary
    /// streams, two coupled): the silence in its place is a packet every stream decodes (libopus
    /// checks each when the repair is verified, opusdec here), as long as the packets lost, zeros
    /// in every channel once the audio before it has faded, and each speaker's tone is in its
    /// channel after it, at its time: the file is as long as before.
    @Test func damageInASurroundOpusFileBecomesSilenceInEveryChannel() throws {
        let rig = try ALSATestRig(input: SurroundTests.input(SurroundTests.deviceOrder, seconds: 5))
        let opus = rig.path("surround.opus")
        let map = SurroundTests.deviceOrder.map(\.rawValue).joined(separator: ",")
        let recorded = try runHark(["record", "-D", "filecap", "-c", "6", "--channel-map", map, "--frame-size", "10", "-d", "4", "-o", opus], rig: rig)
        try #require(recorded.status == 0, "\(recorded.standardError)")
        let before = try OpusTools.decode(opus, dithered: false)
        try RepairTools.flipBit(opus, at: try RepairTools.bytes(opus).count / 2)
        let result = try RepairTools.repair(["--write", opus], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        let said = try #require(result.standardError.firstMatch(of: /(\d+) ms lost at [0-9.]+ s \(\d+ damaged bytes\), made silence/),
                                "\(result.standardError)")
        let lostFrames = Int(said.1)! * 48
        #expect(lostFrames > 0 && lostFrames % 480 == 0, "whole 10 ms packets: \(said.0)")
        let after = try OpusTools.decode(opus, dithered: false)
        let channels = after.channels
        try #require(channels == 6 && after.samples.count == before.samples.count, "\(after.samples.count) samples after, \(before.samples.count) before")
        // The silence begins where the decodes part (the audio before it decodes as it did).
        let firstDifferent = try #require(after.samples.indices.first { after.samples[$0] != before.samples[$0] }) / channels
        let silence = after.samples[((firstDifferent + 960) * channels)..<((firstDifferent + lostFrames) * channels)]
        #expect(silence.allSatisfy { $0 == 0 }, "largest sample in the silence: \(silence.map { abs(Int($0)) }.max() ?? 0)")
        // After it (and 100 ms for the decoder to settle), every speaker is in its channel.
        let resumed = (firstDifferent + lostFrames + 4_800) * channels
        let tail = Array(after.samples[resumed..<min(after.samples.count, resumed + 24_000 * channels)])
        #expect(try (0..<channels).map { try SurroundTests.dominantTone(tail, channels: channels, channel: $0) } == SurroundTests.waveOrder)
    }

    /// A repair that copies (`--keep`) writes its copy with no name until it is checked, so one
    /// killed meanwhile (SIGKILL, a power cut) leaves nothing beside the original. It left a hidden
    /// copy as large as the file, which no later repair removed or named.
    @Test func aCopyingRepairKilledHalfwayLeavesNothingBehind() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 121 * 48_000).alsaBytes)
        let folder = rig.path("archive")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let flac = folder + "/long.flac"
        let recorded = try runHark(["record", "-D", "filecap", "-d", "120", "--no-loudness", "-o", flac], rig: rig)
        #expect(recorded.status == 0, "\(recorded.standardError)")
        let whole = try RepairTools.bytes(flac)
        let torn = whole.prefix(whole.count - 1_000)
        try torn.write(to: URL(fileURLWithPath: flac))
        let repair = try startHark(["repair", "--write", "--keep", flac], rig: rig)
        // Killed once it has its copy open: a descriptor into the folder that is not the original.
        var sawCopy = false
        let deadline = Date().addingTimeInterval(TestLoad.seconds(30))
        while !sawCopy && Date() < deadline {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(repair.pid)/fd")) ?? []
            sawCopy = descriptors.contains { descriptor in
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(repair.pid)/fd/\(descriptor)")) ?? ""
                return target.hasPrefix(folder + "/") && target != flac
            }
            if !sawCopy { usleep(1_000) }
        }
        repair.send(SIGKILL)
        let result = repair.wait(timeout: 10)
        try #require(sawCopy, "the repair's copy was never seen open: \(result.status) \(result.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["long.flac"], "nothing left beside it")
        try expectSameElements(RepairTools.bytes(flac), torn, "the original as it was")
    }

    /// Ctrl-C during a repair is taken while libFLAC decodes (the analysis and the check each
    /// decode the whole file), not only between copies: sent at a tenth of a whole repair's time,
    /// well inside the analysis's decode, it ends the analysis ("nothing changed"), where it was
    /// taken only once the analysis had run to its end, before the write ("the original is
    /// unchanged"; minutes later for a file of gigabytes). What is asserted is where it was taken,
    /// not how soon, which depends on the machine's load. The signal goes once hark blocks it (it
    /// takes it from then on), has the file open and has spent a twentieth of a second of CPU
    /// since: inside the analysis's decode (a second or more of CPU), whatever the load; a sleep
    /// of a tenth of a whole repair's time could come before hark had blocked it.
    @Test func aCtrlCIsTakenWhileTheAudioIsDecoded() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 121 * 48_000).alsaBytes)
        let flac = rig.path("long.flac")
        let recorded = try runHark(["record", "-D", "filecap", "-d", "120", "--no-loudness", "-o", flac], rig: rig)
        #expect(recorded.status == 0, "\(recorded.standardError)")
        let whole = try RepairTools.bytes(flac)
        let torn = whole.prefix(whole.count - 1_000)
        try torn.write(to: URL(fileURLWithPath: rig.path("copy.flac")))
        try torn.write(to: URL(fileURLWithPath: flac))
        let full = try RepairTools.repair(["--write", rig.path("copy.flac")], rig: rig)
        #expect(full.status == 1, "\(full.standardError)")

        let repair = try startHark(["repair", "--write", flac], rig: rig)
        try waitUntilStopSignalsAreBlocked(repair)
        let deadline = Date().addingTimeInterval(TestLoad.seconds(30))
        while repair.process.isRunning, Date() < deadline, !Self.hasOpen(flac, repair.pid) { usleep(1_000) }
        let opened = Self.cpuTicks(of: repair.pid)
        while repair.process.isRunning, Date() < deadline, Self.cpuTicks(of: repair.pid) < opened + 5 { usleep(1_000) }
        #expect(repair.process.isRunning, "the repair ended before the signal")
        let signalled = Date()
        repair.send(SIGINT)
        let result = repair.wait(timeout: 60)
        print("RepairEdgeCaseTests: ended \(Date().timeIntervalSince(signalled)) s after the signal; a whole repair takes \(full.wallSeconds) s")
        #expect(result.status == 130 && result.errorLines == ["hark: \(flac): not repaired (FLAC): interrupted; nothing changed"],
                "\(result.status) \(result.standardError)")
        try expectSameElements(RepairTools.bytes(flac), torn, "the original as it was")
    }

    /// Whether process `pid` has `path` open (a link in /proc/PID/fd leads to it).
    static func hasOpen(_ path: String, _ pid: pid_t) -> Bool {
        let folder = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")) == path
        }
    }

    /// The CPU time process `pid` has used, user and system, in clock ticks (/proc/PID/stat's 14th
    /// and 15th fields; a hundredth of a second each here); 0 when it cannot be told.
    static func cpuTicks(of pid: pid_t) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // After "PID (comm) ": state is field 3, so utime and stime are the 12th and 13th here.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }

    /// A flipped bit in a WAV's fmt chunk (the rate's third byte: 16 MHz) is no whole file: its
    /// fields contradict each other, and which one is wrong cannot be told. It was "nothing to do".
    @Test func aWAVWhoseFormatContradictsItselfIsNotCalledWhole() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 2 * 48_000).alsaBytes)
        let wav = try RepairCommandTests.peerFiles(rig, seconds: 2)[2].path
        let format = try #require(RepairTools.bytes(wav).range(of: Data("fmt ".utf8))).lowerBound
        try RepairTools.flipBit(wav, at: format + 8 + 6)
        let result = try RepairTools.repair([wav], rig: rig)
        #expect(result.status == 65 && result.standardError.contains("its fmt chunk contradicts itself"), "\(result.standardError)")
    }

    /// Two Ogg Opus files joined (`cat a.opus b.opus`, a chained stream players play through): the
    /// second stream's whole pages after the first one's end are not a torn tail. Refused and left
    /// as it is, as the docs say of chained files; until 2026-11-29 `--write` cut the second stream
    /// away and called the file repaired.
    @Test func aChainedOpusFileIsRefusedNotCut() throws {
        let signal = TestSignal(format: Self.format, frames: 2 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        for name in ["a.opus", "b.opus"] {
            let recorded = try runHark(["record", "-D", "filecap", "-d", "1", "-o", rig.path(name)], rig: rig)
            #expect(recorded.status == 0, "\(recorded.standardError)")
        }
        let chained = rig.path("chained.opus")
        let joined = try RepairTools.bytes(rig.path("a.opus")) + RepairTools.bytes(rig.path("b.opus"))
        try joined.write(to: URL(fileURLWithPath: chained))
        for arguments in [[chained], ["--write", chained]] {
            let result = try RepairTools.repair(arguments, rig: rig)
            #expect(result.status == 65, "\(arguments): \(result.standardError)")
            #expect(result.errorLines == ["hark: \(chained): cannot repair (Ogg Opus): it holds more than one Ogg stream "
                                          + "(chained or multiplexed), which repair does not handle"], "\(result.standardError)")
            #expect(try RepairTools.bytes(chained) == joined, "left as it was")
        }
        // Bytes after the end that are no page are still a tail, and cut.
        let trailed = rig.path("trailed.opus")
        try (RepairTools.bytes(rig.path("a.opus")) + Data(repeating: 0x5A, count: 300)).write(to: URL(fileURLWithPath: trailed))
        let cut = try RepairTools.repair(["--write", trailed], rig: rig)
        #expect(cut.status == 1 && cut.standardError.contains("300 bytes after the end of the stream, cut"), "\(cut.standardError)")
        #expect(try RepairTools.bytes(trailed) == RepairTools.bytes(rig.path("a.opus")))
    }

    /// A FLAC written to a pipe (no count, no MD5) and cut inside its first frame, as a recorder
    /// killed in its first moments leaves it: the torn frame is cut to an empty stream, whole to
    /// flac, as an Ogg Opus or WAV file killed before its first audio becomes. Until 2026-11-29 it
    /// was refused ("no intact audio frame"), and the file stayed broken. More than a frame's
    /// bytes with no frame in them are still refused: that is not a torn start.
    @Test func aFLACCutInsideItsFirstFrameBecomesAnEmptyStream() throws {
        let signal = TestSignal(format: Self.format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let raw = rig.path("in.raw"), piped = rig.path("piped.flac")
        try signal.alsaBytes.write(to: URL(fileURLWithPath: raw))
        let encoded = try runTool("sh", ["-c", "flac --silent --force-raw-format --endian=little --sign=signed --channels=2 --bps=16 "
                                         + "--sample-rate=48000 -c - < \(shellQuoted(raw)) > \(shellQuoted(piped))"])
        try #require(encoded.status == 0, "\(encoded.standardError)")
        let whole = try RepairTools.bytes(piped)
        let audioStart = try #require(firstFrameOffset([UInt8](whole)))
        let torn = rig.path("torn.flac")
        try whole.prefix(audioStart + 100).write(to: URL(fileURLWithPath: torn))
        let check = try RepairTools.repair([torn], rig: rig)
        #expect(check.status == 2 && check.standardError.contains("100 bytes at the end that are no whole frame, cut"), "\(check.standardError)")
        let repaired = try RepairTools.repair(["--write", torn], rig: rig)
        #expect(repaired.status == 1, "\(repaired.standardError)")
        #expect(try FLACTools.test(torn).status == 0, "flac -t takes it")
        #expect(try FLACTools.totalSamples(torn) == 0)
        #expect(try RepairTools.repair([torn], rig: rig).status == 0, "a repaired file needs nothing more")

        // A whole file with placeholder seek points (`flac -S X`, for a later tool to fill) is left
        // byte for byte; until 2026-11-29 it was called damaged ("seek points unfilled") and rewritten.
        let placeholders = rig.path("placeholders.flac")
        let made = try runTool("flac", ["--silent", "--force-raw-format", "--endian=little", "--sign=signed", "--channels=2", "--bps=16",
                                        "--sample-rate=48000", "-S", "X", "-S", "X", "-o", placeholders, raw])
        try #require(made.status == 0, "\(made.standardError)")
        let placeholderBytes = try RepairTools.bytes(placeholders)
        let untouched = try RepairTools.repair(["--write", placeholders], rig: rig)
        #expect(untouched.status == 0, "\(untouched.standardError)")
        #expect(try RepairTools.bytes(placeholders) == placeholderBytes)

        let noFrame = rig.path("no-frame.flac")
        try (whole.prefix(audioStart) + Data(repeating: 0x5A, count: 200_000)).write(to: URL(fileURLWithPath: noFrame))
        let refused = try RepairTools.repair(["--write", noFrame], rig: rig)
        #expect(refused.status == 65 && refused.standardError.contains("no intact audio frame: nothing to recover"), "\(refused.standardError)")
    }

    @Test func anMP3IsNotTakenForAFLAC() throws {
        let rig = try ALSATestRig(input: Data(count: 4))
        // An ID3v2.4 tag of 16 bytes (a TIT2 frame), then an MPEG-1 Layer III frame header.
        var mp3 = Data("ID3".utf8) + Data([4, 0, 0, 0, 0, 0, 16])
        mp3 += Data("TIT2".utf8) + Data([0, 0, 0, 6, 0, 0, 3]) + Data("Title".utf8)
        mp3 += Data([0xFF, 0xFB, 0x90, 0x64]) + Data(repeating: 0, count: 413)
        let path = rig.path("song.mp3")
        try mp3.write(to: URL(fileURLWithPath: path))
        let result = try RepairTools.repair([path], rig: rig)
        #expect(result.status == 65)
        #expect(result.errorLines == ["hark: \(path): cannot repair: not a FLAC, Ogg Opus or WAV file"])

        // A FLAC cut inside its header: named as FLAC the way every other FLAC line is.
        let cut = rig.path("cut.flac")
        try (Data("fLaC".utf8) + Data([0x80, 0, 0, 34]) + Data(count: 10)).write(to: URL(fileURLWithPath: cut))
        let cutResult = try RepairTools.repair([cut], rig: rig)
        #expect(cutResult.status == 65)
        #expect(cutResult.errorLines == ["hark: \(cut): cannot repair (FLAC): the FLAC header is cut short: no audio to recover"])
    }

    /// A file's name is anyone's choice (a glob over a shared folder names them all): one with an
    /// escape sequence and a newline was printed as it was, so `hark repair *` cleared the screen
    /// and showed a line the file made up. Each line now shows them escaped, and stays one line.
    @Test func aFileNameWithControlCharactersIsShownEscapedOnOneLine() throws {
        let rig = try ALSATestRig(input: Data(count: 4))
        let name = "x\u{1B}[2J\nhark: fake.mp3"
        let path = rig.path(name)
        try Data(repeating: 0, count: 64).write(to: URL(fileURLWithPath: path))
        let result = try RepairTools.repair([path], rig: rig)
        #expect(result.status == 65)
        #expect(result.errorLines == ["hark: \(rig.path("x\\x1b[2J\\nhark: fake.mp3")): cannot repair: not a FLAC, Ogg Opus or WAV file"],
                "\(result.standardError)")
        #expect(!result.standardError.contains("\u{1B}"))
    }

    @Test func aCompressedWAVsDurationCountsItsBlocks() throws {
        let signal = TestSignal(format: Self.format, frames: 2 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let wav = rig.path("adpcm.wav")
        let made = try runTool("ffmpeg", ["-v", "error", "-f", "s16le", "-ar", "48000", "-ac", "2", "-i", rig.inputFile.path,
                                          "-c:a", "adpcm_ima_wav", wav])
        try #require(made.status == 0, "\(made.standardError)")
        let whole = try RepairTools.repair([wav], rig: rig)
        #expect(whole.status == 0, "\(whole.standardError)")
        let seconds = try #require(Self.number(in: whole.standardError, after: "nothing to do (WAV, "), "\(whole.standardError)")
        // ffprobe's figure: 95 blocks of 1017 frames (ffmpeg's byte rate in the header is wrong).
        #expect(abs(seconds - 2.013) < 0.001, "\(whole.standardError)")

        let bytes = try RepairTools.bytes(wav)
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: wav))
        let torn = try RepairTools.repair([wav], rig: rig)
        #expect(torn.status == 2, "\(torn.standardError)")
        // Half the file: half the audio, in whole blocks of 1017 frames (21 ms), the torn one cut.
        let dataBytes = try #require(Self.number(in: torn.standardError, after: "the file holds "), "\(torn.standardError)")
        let kept = try #require(Self.number(in: torn.standardError, after: "torn frame at the end, cut; "), "\(torn.standardError)")
        #expect(abs(kept - Double(Int(dataBytes) / 1024 * 1017) / 48_000) < 0.0005, "\(torn.standardError)")
        #expect(abs(kept - 1.006) < 0.05, "\(torn.standardError)")
    }

    @Test func aBackupIsNamedWhereItIsWhenTheFileIsReachedThroughALink() throws {
        let signal = TestSignal(format: Self.format, frames: 3 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = try RepairCommandTests.peerFiles(rig, seconds: 3)[0].path
        let target = rig.path("take.flac"), link = rig.path("link.flac")
        try RepairTools.bytes(flac).prefix(200_000).write(to: URL(fileURLWithPath: target))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "take.flac")
        let result = try RepairTools.repair(["--write", "--keep", link], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        let named = try #require(result.standardError.components(separatedBy: "the original is ").last?
            .trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(FileManager.default.fileExists(atPath: named), "the line names \(named), which must exist")
        #expect(URL(fileURLWithPath: named).resolvingSymlinksInPath().path
                == URL(fileURLWithPath: target + ".orig").resolvingSymlinksInPath().path)
        #expect(try FLACTools.test(link).status == 0)
    }

    /// A user's read-only file is refused, not swapped for a writable copy (which would cut its
    /// hard links). Run as `nobody` when the suite runs as root, whom file modes do not stop.
    @Test func aReadOnlyFileIsRefusedAndLeftAsItIs() throws {
        let signal = TestSignal(format: Self.format, frames: 3 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = try RepairCommandTests.peerFiles(rig, seconds: 3)[0].path
        // A directory anyone may enter and write, as a user's own folder is to them.
        let folder = try Self.worldWritableFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/archive.flac", link = folder + "/also-archive.flac"
        let damaged = try RepairTools.bytes(flac).prefix(200_000)
        try damaged.write(to: URL(fileURLWithPath: file))
        try FileManager.default.linkItem(atPath: file, toPath: link)
        var executable = harkBinary, arguments = ["repair", "--write", file]
        if geteuid() == 0 {
            // nobody must reach the binary: a copy in the folder (the build may be under /root).
            let copy = folder + "/hark"
            try FileManager.default.copyItem(atPath: harkBinary.path, toPath: copy)
            chown(file, 65534, 65534)
            let setpriv = try #require(findOnPath("setpriv"), "setpriv (util-linux) runs hark as nobody")
            executable = URL(fileURLWithPath: setpriv)
            arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", copy] + arguments
        }
        chmod(file, 0o444)
        let result = try RunningProcess(executable, arguments, environment: rig.environment, scratch: rig.directory).wait(timeout: 60)
        #expect(result.status == 73, "\(result.standardError)")
        #expect(result.errorLines == ["hark: \(file): not repaired (FLAC): cannot write it: it is read-only (Permission denied); nothing changed"])
        try expectSameElements(RepairTools.bytes(file), damaged, "the file is as it was")
        let sameFile = try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int
        #expect(sameFile == (try FileManager.default.attributesOfItem(atPath: link)[.systemFileNumber] as? Int), "still one file")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".") }.isEmpty, "no copy left")
    }

    static func worldWritableFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hark-readonly-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        chmod(folder, 0o777)
        return folder
    }

    /// The number that follows `prefix` in `text` ("…<prefix>1.234 s…" gives 1.234).
    static func number(in text: String, after prefix: String) -> Double? {
        guard let range = text.range(of: prefix) else { return nil }
        return Double(text[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }
}
