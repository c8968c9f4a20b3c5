import AudioFormat
import Foundation
import Testing

/// Names with strftime conversions (`-o 'rec-%Y%m%d-%H%M%S.flac'`, the recordings library's
/// `rec-…`): meant to be new, expanded for when each file starts (the first when the recording
/// starts, after any prompt), and agreeing with each file's DATE.
@Suite struct TimeNamedOutputTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// A file's DATE (local `YYYY-MM-DDTHH:MM:SS±HH:MM`) as a name's `%Y%m%d-%H%M%S`.
    static func nameStamp(ofDate path: String) throws -> String {
        let date = try #require(try FLACTools.tags(path).first { $0.hasPrefix("DATE=") }?.dropFirst(5), "\(path)")
        return String(date.prefix(19)).replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
            .replacingOccurrences(of: "T", with: "-")
    }

    /// Two runs in the same minute of `-o 'rec-%H%M.flac'` replaced the first run's file (and
    /// numbered the second's parts among the first's). The year's name is taken by a file this
    /// year and next year, so the test holds across New Year's Eve too.
    @Test func aNameWithTimeConversionsNeverReplacesAFile() throws {
        let signal = TestSignal(format: Self.format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let year = Calendar.current.component(.year, from: Date())
        for taken in [year, year + 1] { try "keep me".write(toFile: rig.path("r-\(taken).flac"), atomically: true, encoding: .utf8) }
        let result = try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("r-%Y.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        for taken in [year, year + 1] {
            #expect(try String(contentsOfFile: rig.path("r-\(taken).flac"), encoding: .utf8) == "keep me")
        }
        let recorded = try #require(["r-\(year)-2.flac", "r-\(year + 1)-2.flac"].map(rig.path).first { FileManager.default.fileExists(atPath: $0) },
                                    "\(result.standardError)")
        #expect(result.standardError.contains("to \(recorded)"), "the summary names the file it wrote: \(result.standardError)")
        try expectSameElements(FLACTools.decode(recorded, bitsPerSample: 16), signal.prefix(frames: 24_000))
        // A plain name still replaces, as flac -o and arecord do.
        try "old".write(toFile: rig.path("plain.flac"), atomically: true, encoding: .utf8)
        #expect(try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("plain.flac")], rig: rig).status == 0)
        #expect(try FLACTools.totalSamples(rig.path("plain.flac")) == 24_000)
    }

    /// The first file's name is for when the recording starts: a consent prompt answered after
    /// seconds does not leave it named for when hark was started (its DATE said the later time).
    @Test func theFirstNameIsForTheStartNotForWhenThePromptWasShown() throws {
        let signal = TestSignal(format: Self.format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes, grantMicrophone: false)
        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("p-%Y%m%d-%H%M%S.flac")]), rig: rig)
        #expect(session.waitFor(promptQuestion), "\(session.screen)")
        let shown = Date()
        // Well into a later second than the one the prompt was shown in.
        usleep(useconds_t(2_200_000))
        let answered = Date()
        session.type("o\n")
        let result = session.finish()
        #expect(result.status == 0, "\(result.screen)")
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: rig.directory.path)) ?? []).filter { $0.hasPrefix("p-") }
        let name = try #require(files.count == 1 ? files.first : nil, "\(files)")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "'p-'yyyyMMdd-HHmmss'.flac'"
        let named = try #require(formatter.date(from: name), "\(name)")
        #expect(named >= answered.addingTimeInterval(-1), "named \(name); prompt shown \(shown), answered \(answered)")
        #expect(try "p-" + Self.nameStamp(ofDate: rig.path(name)) + ".flac" == name, "its DATE says when it started")
    }

    /// Each part of a split library recording is named for its own first sample, as a
    /// sound-activated one's files are (they were `rec-<start>-2`, `-3`, like recordings that
    /// happened to start in the same second), and its DATE agrees.
    /// Parts of two seconds: the first part is named for the recording's start, the later ones
    /// for the first sample's time plus their frames, and from a file source (read faster than
    /// real time) the first sample's time comes out up to a period before the start, so a
    /// one-second part could fall in the first part's second and be numbered instead.
    @Test func eachPartOfASplitLibraryRecordingIsNamedForItsStart() throws {
        let signal = TestSignal(format: Self.format, frames: 6 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        #expect(try runHark(["permissions", "grant", "recordings"], rig: rig).status == 0)
        let result = try runHark(["record", "-D", "filecap", "-d", "5", "--max-file-time", "2"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let library = rig.path("Recordings")
        let saved = ((try? FileManager.default.contentsOfDirectory(atPath: library)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        #expect(saved.count == 3, "\(saved)")
        // Parts two seconds of audio apart: three different seconds, in order, none numbered.
        let stamps = try saved.map { try Self.nameStamp(ofDate: "\(library)/\($0)") }
        #expect(saved == stamps.map { "rec-\($0).flac" }, "names \(saved), DATEs \(stamps)")
        #expect(Set(stamps).count == 3)
        let joined = try saved.flatMap { try FLACTools.decode("\(library)/\($0)", bitsPerSample: 16) }
        expectSameElements(joined, signal.prefix(frames: 240_000))
    }
}
