import Foundation
@testable import Repair
import Testing

/// `InPlaceRepairWriter`: which plans it takes (the kept ranges stay where they are), that it writes
/// them into the same file, and that a repair which does not check out leaves the original exactly
/// as it was, its cut tail included.
@Suite struct InPlaceRepairTests {
    /// A scratch file of `count` bytes counting up, removed when the test ends.
    final class Scratch {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hark-inplace-\(UUID().uuidString.prefix(8))").path
        let bytes: [UInt8]
        init(count: Int) throws {
            bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        var current: [UInt8] { (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? [] }
        var inode: UInt64 {
            var info = stat()
            return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
        }
        deinit { unlink(path) }
    }

    /// A header rewritten and a torn tail cut: the kept range stays in place.
    static func headerAndCut(_ size: Int) -> RepairPlan {
        RepairPlan(segments: [.bytes([UInt8](repeating: 0xAB, count: 40)), .original(40..<(size - 3))])
    }

    @Test func aPlanThatKeepsTheAudioInPlaceIsWrittenIntoTheFileItself() throws {
        let scratch = try Scratch(count: 100_000)
        let inode = scratch.inode
        let file = try MappedFile(path: scratch.path)
        let writer = try #require(InPlaceRepairWriter(original: file, destination: scratch.path, plan: Self.headerAndCut(100_000)))
        var checked: [UInt8] = []
        #expect(try writer.write { bytes in checked = Array(bytes); return nil })
        let expected = [UInt8](repeating: 0xAB, count: 40) + scratch.bytes[40..<(100_000 - 3)]
        #expect(scratch.current == expected)
        #expect(checked == expected, "the check read the repaired file")
        #expect(scratch.inode == inode, "the same file, not a copy renamed over it")
    }

    @Test func aRepairThatDoesNotCheckOutIsUndoneExactly() throws {
        let scratch = try Scratch(count: 100_000)
        let file = try MappedFile(path: scratch.path)
        // A rewritten header, a new last piece written past the cut of the old one, and a cut.
        let plan = RepairPlan(segments: [.bytes([UInt8](repeating: 1, count: 12)), .original(12..<90_000),
                                         .bytes([UInt8](repeating: 2, count: 500))])
        let writer = try #require(InPlaceRepairWriter(original: file, destination: scratch.path, plan: plan))
        var failure: RepairFailure?
        do { _ = try writer.write { _ in "the frames do not decode" } } catch { failure = error }
        let error = try #require(failure)
        #expect(error.kind == .verificationFailed)
        #expect(error.message == "the repaired file did not check out (the frames do not decode); the original is unchanged")
        #expect(scratch.current == scratch.bytes, "every byte of the original is back, the cut tail included")
    }

    @Test func aFileThatGrowsIsCutBackToItsSizeWhenUndone() throws {
        let scratch = try Scratch(count: 5_000)
        let file = try MappedFile(path: scratch.path)
        // A WAV of odd data size gets its pad byte: the repaired file is a byte longer.
        let plan = RepairPlan(segments: [.bytes([9, 9, 9, 9]), .original(4..<5_000), .bytes([0])])
        let writer = try #require(InPlaceRepairWriter(original: file, destination: scratch.path, plan: plan))
        #expect(throws: RepairFailure.self) { try writer.write { bytes in bytes.count == 5_001 ? "refused" : "wrong length" } }
        #expect(scratch.current == scratch.bytes)
    }

    @Test func writesPastTheOriginalsEndAreUndoneToo() throws {
        let scratch = try Scratch(count: 3_000)
        let file = try MappedFile(path: scratch.path)
        // A last page rebuilt longer than the torn one it replaces, in two pieces past the end.
        let plan = RepairPlan(segments: [.original(0..<2_500), .bytes([UInt8](repeating: 5, count: 600)),
                                         .bytes([UInt8](repeating: 6, count: 200))])
        let writer = try #require(InPlaceRepairWriter(original: file, destination: scratch.path, plan: plan))
        #expect(throws: RepairFailure.self) { try writer.write { _ in "refused" } }
        #expect(scratch.current == scratch.bytes)
        #expect(try writer.write { _ in nil })
        #expect(scratch.current == Array(scratch.bytes[0..<2_500]) + [UInt8](repeating: 5, count: 600) + [UInt8](repeating: 6, count: 200))
    }

    @Test func aPlanThatMovesWhatItKeepsNeedsACopy() throws {
        let scratch = try Scratch(count: 10_000)
        let file = try MappedFile(path: scratch.path)
        // A ds64 chunk inserted before the audio moves it 36 bytes on.
        let inserted = RepairPlan(segments: [.original(0..<12), .bytes([UInt8](repeating: 0, count: 36)), .original(12..<10_000)])
        #expect(InPlaceRepairWriter(original: file, destination: scratch.path, plan: inserted) == nil)
        // A damaged piece replaced by one of another length moves what follows.
        let replaced = RepairPlan(segments: [.original(0..<4_000), .bytes([1, 2, 3]), .original(5_000..<10_000)])
        #expect(InPlaceRepairWriter(original: file, destination: scratch.path, plan: replaced) == nil)
    }

    @Test func aPlanThatOverwritesMoreThanCanBeSavedNeedsACopy() throws {
        let size = InPlaceRepairWriter.rollbackLimit + 4_096
        let scratch = try Scratch(count: size)
        let file = try MappedFile(path: scratch.path)
        let rewritten = RepairPlan(segments: [.original(0..<4_000), .bytes([UInt8](repeating: 0, count: size - 4_000))])
        #expect(InPlaceRepairWriter(original: file, destination: scratch.path, plan: rewritten) == nil)
        let cutShort = RepairPlan(segments: [.original(0..<2_000)])
        #expect(InPlaceRepairWriter(original: file, destination: scratch.path, plan: cutShort) == nil)
        #expect(InPlaceRepairWriter(original: file, destination: scratch.path, plan: Self.headerAndCut(size)) != nil)
    }

    @Test func aPathThatCannotBeOpenedForWritingIsLeftToTheCopy() throws {
        let scratch = try Scratch(count: 1_000)
        let file = try MappedFile(path: scratch.path)
        let writer = try #require(InPlaceRepairWriter(original: file, destination: scratch.path + ".gone", plan: Self.headerAndCut(1_000)))
        #expect(try writer.write { _ in nil } == false)
        #expect(scratch.current == scratch.bytes)
    }
}
