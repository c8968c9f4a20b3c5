import AudioFormat
import Foundation
import Testing

/// `hark repair --write` where the recording died: on a disk with no room for a copy of the file.
/// A killed recording's repair rewrites headers and cuts a torn tail, so it is written into the file
/// itself (`InPlaceRepairWriter`): it succeeds with 16 KiB free, keeps the file (its inode, so hard
/// links and open readers see the repair) and leaves no temporary file. A WAV past 4 GiB on a full
/// disk is `RF64RecordingTests`.
@Suite struct RepairOnAFullDiskTests {
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root (CI runs as root)"), arguments: ["flac", "opus"])
    func aKilledRecordingIsRepairedInPlaceOnAFullDisk(_ codec: String) throws {
        let signal = TestSignal(format: AccessLogTests.format, frames: 20 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        try rig.withSmallDisk(size: "8m") { disk in
            let output = disk + "/killed.\(codec)"
            let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
            if codec == "flac" { try OutputGrowth.waitForFLACAudio(output, seconds: 3) } else { try OutputGrowth.waitForOpusAudio(output, seconds: 3) }
            recording.send(SIGKILL)
            _ = recording.wait(timeout: 10)
            let decodedBefore = try RepairTools.decode(output, codec: codec)

            // Fill the disk, leaving 16 KiB: less than the file, so a copy of it cannot be made.
            let size = try #require(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
            let filler = disk + "/filler"
            try Data(count: max(0, Self.freeBytes(disk) - (16 << 10))).write(to: URL(fileURLWithPath: filler))
            let free = try Self.freeBytes(disk)
            try #require(free < size, "\(free) bytes free, the file is \(size)")
            let inode = try #require(try FileManager.default.attributesOfItem(atPath: output)[.systemFileNumber] as? Int)

            let result = try RepairTools.repair(["--write", output], rig: rig)
            #expect(result.status == 1, "\(result.standardError)")
            #expect(try RepairTools.isClean(output, codec: codec), "the repaired file does not check clean: \(result.standardError)")
            // Decoded from a copy off the full disk, where the decoders write their output.
            let repaired = rig.path("repaired.\(codec)")
            try FileManager.default.copyItem(atPath: output, toPath: repaired)
            let decoded = try RepairTools.decode(repaired, codec: codec)
            if codec == "opus" {
                let same = decoded == decodedBefore  // (outside #expect: its diff of two long arrays takes minutes)
                #expect(same, "\(decoded.count) samples after the repair, \(decodedBefore.count) before")
            } else {
                let isPrefix = decoded[...] == signal.prefix(frames: decoded.count / 2)
                #expect(decoded.count >= decodedBefore.count && isPrefix, "\(decoded.count) samples after, \(decodedBefore.count) before")
            }
            #expect(try FileManager.default.attributesOfItem(atPath: output)[.systemFileNumber] as? Int == inode,
                    "repaired in the file itself")
            #expect(RepairTools.hiddenFiles(in: disk).isEmpty, "a temporary file was left behind")
        }
    }

    static func freeBytes(_ path: String) throws -> Int {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { throw TestRigError("statvfs \(path): \(String(cString: strerror(errno)))") }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }
}
