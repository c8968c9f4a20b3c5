import AudioFormat
import Foundation
import Testing

/// Recording without -o saves into the recordings library, a second protected resource granted
/// add-only: asked for once, shown by `hark permissions`, needed by other apps too, and what was
/// saved is listed by `hark list` from the access log.
@Suite struct RecordingsLibraryTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    func libraryFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test func theFirstRecordingAsksOnceAndSavesATimestampedFileInTheMusicFolder() throws {
        let signal = TestSignal(format: Self.format, frames: 3 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        // xdg-user-dirs: the music folder is ~/Sounds here, so the library is ~/Sounds/Recordings.
        try FileManager.default.createDirectory(atPath: rig.path("config"), withIntermediateDirectories: true)
        try "XDG_MUSIC_DIR=\"$HOME/Sounds\"\n".write(toFile: rig.path("config/user-dirs.dirs"), atomically: true, encoding: .utf8)
        let library = rig.path("Sounds/Recordings")

        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1"]), rig: rig)
        #expect(session.waitFor(promptQuestion))
        #expect(session.screen.contains("“hark” would like to access your recordings library (to add recordings)."), "\(session.screen)")
        #expect(session.screen.contains("It only adds files there; it never reads"), "the purpose string is quoted")
        session.type("a\n")
        #expect(session.finish().status == 0)
        let saved = libraryFiles(library)
        #expect(saved.count == 1 && saved[0].hasPrefix("rec-") && saved[0].hasSuffix(".flac"), "\(saved)")
        let stamp = try #require(saved.first?.dropFirst(4).prefix(15))
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let when = try #require(formatter.date(from: String(stamp)), "\(saved)")
        #expect(abs(when.timeIntervalSinceNow) < 120)
        try expectSameElements(FLACTools.decode("\(library)/\(saved[0])", bitsPerSample: 16) [...], signal.prefix(frames: 48_000))
        var info = stat()
        #expect(stat(library, &info) == 0 && info.st_mode & 0o777 == 0o700, "the library folder is private")

        // Asked once: the next recording saves without a prompt, under a new name.
        let second = try runHark(["record", "-D", "filecap", "-d", "1", "--format", "opus"], rig: rig)
        #expect(second.status == 0, "\(second.standardError)")
        #expect(libraryFiles(library).count == 2 && libraryFiles(library).contains { $0.hasSuffix(".opus") })

        let status = String(decoding: try runHark(["permissions"], rig: rig).standardOutput, as: UTF8.self)
        #expect(status.contains("recordings: authorized (at the prompt"), "\(status)")
        let list = String(decoding: try runHark(["list"], rig: rig).standardOutput, as: UTF8.self)
        #expect(list.split(separator: "\n").count == 2 && list.contains(saved[0]) && list.contains("  1 s  "), "\(list)")

        try FileManager.default.removeItem(atPath: "\(library)/\(saved[0])")
        let afterDelete = String(decoding: try runHark(["list"], rig: rig).standardOutput, as: UTF8.self)
        #expect(afterDelete.contains("\(saved[0])  (missing)"), "\(afterDelete)")

        // The music folder moves: what was saved to the library before is still listed (the log
        // says it was saved there), and a file recorded elsewhere with -o is not.
        try "XDG_MUSIC_DIR=\"$HOME/Music\"\n".write(toFile: rig.path("config/user-dirs.dirs"), atomically: true, encoding: .utf8)
        #expect(try runHark(["record", "-D", "filecap", "-d", "1", "-o", rig.path("elsewhere.flac")], rig: rig).status == 0)
        let moved = String(decoding: try runHark(["list"], rig: rig).standardOutput, as: UTF8.self)
        #expect(moved.split(separator: "\n").count == 2 && moved.contains(library + "/") && !moved.contains("elsewhere"), "\(moved)")
    }

    @Test func aSplitRecordingIsListedFileByFile() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 3 * 48_000).alsaBytes)
        #expect(try runHark(["permissions", "grant", "recordings"], rig: rig).status == 0)
        let result = try runHark(["record", "-D", "filecap", "-d", "2.5", "--max-file-time", "1"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let saved = libraryFiles(rig.path("Recordings"))
        #expect(saved.count == 3, "\(saved)")
        let lines = String(decoding: try runHark(["list"], rig: rig).standardOutput, as: UTF8.self)
            .split(separator: "\n").map(String.init)
        #expect(lines.count == 3 && lines[0].contains("  2.500 s  "), "\(lines)")
        // When it started, in local time with the offset (as the file names and --since).
        #expect(lines.first?.range(of: #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}  2\.500 s  "#,
                                   options: .regularExpression) != nil, "\(lines)")
        for name in saved {
            #expect(lines.filter { $0.hasSuffix("/" + name) }.count == 1, "\(name) on a line of its own: \(lines)")
        }
        #expect(!lines.joined().contains("missing"), "\(lines)")
    }

    /// A file put in the library folder with -o is listed however the path was spelled (a double
    /// slash, `..` through the folder, a link to it), and one put beside it through `..` is not:
    /// the log kept the path as typed, and the list matched its text.
    @Test func aFileIsInTheLibraryByWhereItIsNotHowItsPathIsSpelled() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        let library = rig.path("Recordings")
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: rig.path("shortcut"), withDestinationPath: library)
        let inside = [rig.directory.path + "/Recordings//double.flac", library + "/../Recordings/dotdot.flac", rig.path("shortcut/linked.flac")]
        let outside = [library + "/../beside.flac"]
        for output in inside + outside {
            let result = try runHark(["record", "-D", "filecap", "-d", "0.2", "-o", output], rig: rig)
            #expect(result.status == 0, "\(result.standardError)")
        }
        let lines = String(decoding: try runHark(["list"], rig: rig).standardOutput, as: UTF8.self).split(separator: "\n")
        for name in ["double.flac", "dotdot.flac", "linked.flac"] {
            #expect(lines.filter { $0.hasSuffix("  " + library + "/" + name) }.count == 1, "\(name): \(lines)")
        }
        #expect(lines.count == 3 && !lines.contains { $0.contains("beside") }, "\(lines)")
        let log = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
        #expect(log.contains(rig.path("beside.flac")) && !log.contains("/../") && !log.contains("//"), "\(log)")
    }

    @Test func withoutAMusicFolderTheLibraryIsHomeRecordings() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        #expect(try runHark(["permissions", "grant", "recordings"], rig: rig).status == 0)
        let result = try runHark(["record", "-D", "filecap", "-d", "0.5"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(libraryFiles(rig.path("Recordings")).count == 1)
    }

    @Test func aDeniedLibraryStopsBeforeTheMicrophoneAndLeavesNothing() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        #expect(try runHark(["permissions", "deny", "recordings"], rig: rig).status == 0)
        let result = try runHark(["record", "-D", "filecap", "-d", "1"], rig: rig)
        #expect(result.status == 77)
        #expect(result.errorLines.count == 1 && result.standardError.contains("hark permissions grant recordings"), "\(result.standardError)")
        #expect(libraryFiles(rig.path("Recordings")).isEmpty)
        // Naming a file needs no library access at all.
        #expect(try runHark(["record", "-D", "filecap", "-d", "0.5", "-o", rig.path("named.flac")], rig: rig).status == 0)
    }

    /// With the microphone already denied, the recording cannot happen: that is said first, and
    /// nothing asks about the library, makes its folder or stores an answer for it.
    @Test func aDeniedMicrophoneIsSaidBeforeTheLibraryIsAskedAbout() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes, grantMicrophone: false)
        #expect(try runHark(["permissions", "deny", "microphone"], rig: rig).status == 0)
        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1"]), rig: rig)
        let result = session.finish(timeout: 20)
        #expect(result.status == 77, "\(result.screen)")
        #expect(!result.screen.contains(promptQuestion), "no prompt: \(result.screen)")
        #expect(result.screen.contains("not allowed to use the microphone"), "\(result.screen)")
        let withoutTerminal = try runHark(["record", "-D", "filecap", "-d", "1"], rig: rig)
        #expect(withoutTerminal.status == 77)
        #expect(withoutTerminal.errorLines.count == 1 && withoutTerminal.standardError.contains("hark permissions grant microphone"),
                "\(withoutTerminal.standardError)")
        #expect(!FileManager.default.fileExists(atPath: rig.path("Recordings")))
        let status = String(decoding: try runHark(["permissions"], rig: rig).standardOutput, as: UTF8.self)
        #expect(status.contains("recordings: not determined"), "\(status)")
    }

    /// The library's Yes makes its folder; a No at the microphone's prompt that follows means no
    /// recording, and the folder made for it goes again (a folder that was there stays).
    @Test(arguments: [false, true])
    func aMicrophoneRefusedAfterTheLibraryWasAllowedLeavesNoFolder(libraryExisted: Bool) throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes, grantMicrophone: false)
        try FileManager.default.createDirectory(atPath: rig.path("config"), withIntermediateDirectories: true)
        try "XDG_MUSIC_DIR=\"$HOME/Sounds\"\n".write(toFile: rig.path("config/user-dirs.dirs"), atomically: true, encoding: .utf8)
        if libraryExisted { try FileManager.default.createDirectory(atPath: rig.path("Sounds/Recordings"), withIntermediateDirectories: true) }

        let session = try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1"]), rig: rig)
        #expect(session.waitFor("would like to access your recordings library"), "\(session.screen)")
        session.type("a\n")
        #expect(session.waitFor("would like to access the microphone."), "\(session.screen)")
        session.type("d\n")
        let result = session.finish()
        #expect(result.status == 77, "\(result.screen)")
        #expect(FileManager.default.fileExists(atPath: rig.path("Sounds/Recordings")) == libraryExisted)
        #expect(FileManager.default.fileExists(atPath: rig.path("Sounds")) == libraryExisted, "the music folder made for it goes too")
        let status = String(decoding: try runHark(["permissions"], rig: rig).standardOutput, as: UTF8.self)
        #expect(status.contains("recordings: authorized (at the prompt"), "the library's answer is kept: \(status)")
    }

    /// A sound-activated recording logs each segment and, when it stops, an entry of its own naming
    /// the same files: `hark list` lists each file once (every one was listed twice), and
    /// `hark permissions log` marks the segments' lines.
    @Test func aSoundActivatedRecordingIsListedOnceSegmentBySegment() throws {
        let rig = try ALSATestRig(input: SoundActivationTests.inputBytes)
        #expect(try runHark(["permissions", "grant", "recordings"], rig: rig).status == 0)
        let result = try runHark(["record", "-D", "filecap", "-d", "11", "--ring-seconds", "20", "--start-above", "-40",
                                  "--split-on-silence", "1"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let saved = libraryFiles(rig.path("Recordings"))
        #expect(saved.count == 3, "\(saved)")
        let lines = String(decoding: try runHark(["list"], rig: rig).standardOutput, as: UTF8.self)
            .split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(lines)")
        for name in saved {
            #expect(lines.filter { $0.hasSuffix("/" + name) }.count == 1, "\(name) on one line: \(lines)")
        }
        let log = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
            .split(separator: "\n").map(String.init)
        #expect(log.count == 4 && (1...3).allSatisfy { number in log.contains { $0.contains(" → segment \(number): ") } }, "\(log)")
    }

    @Test func anotherAppNeedsItsOwnGrantToAddToTheLibrary() throws {
        let rig = try ALSATestRig(input: TestSignal(format: PCMFormat(sampleFormat: .s16LE, channels: 1, sampleRate: 48_000),
                                                    frames: 48_000).alsaBytes)
        #expect(try runHark(["permissions", "grant", "recordings"], rig: rig).status == 0)  // hark's, not Voice Memo's
        #expect(try runHark(["permissions", "grant", "microphone", "--app", "org.example.voicememo"], rig: rig).status == 0)
        let voiceMemo = harkBinary.deletingLastPathComponent().appendingPathComponent("voice-memo")
        let refused = try RunningProcess(URL(fileURLWithPath: findOnPath("setsid") ?? "/usr/bin/setsid"),
                                         ["-w", voiceMemo.path, "-D", "filecap", "0.5"],
                                         environment: rig.environment, scratch: rig.directory).wait()
        #expect(refused.status == 77)
        #expect(refused.standardError.contains("hark permissions grant recordings --app org.example.voicememo"), "\(refused.standardError)")
        #expect(libraryFiles(rig.path("Recordings")).isEmpty)

        #expect(try runHark(["permissions", "grant", "recordings", "--app", "org.example.voicememo"], rig: rig).status == 0)
        let saved = try RunningProcess(voiceMemo, ["-D", "filecap", "0.5"], environment: rig.environment, scratch: rig.directory).wait()
        #expect(saved.status == 0, "\(saved.standardError)")
        #expect(libraryFiles(rig.path("Recordings")).count == 1)
    }

    /// Two recordings into the library started in the same second choose the same name; each must
    /// still get a file of its own. Both wait at the microphone prompt, their names chosen, so
    /// neither has taken its name when the other chooses.
    @Test func twoRecordingsStartedTogetherEachGetAFileOfTheirOwn() throws {
        let signal = TestSignal(format: Self.format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes, grantMicrophone: false)
        #expect(try runHark(["permissions", "grant", "recordings"], rig: rig).status == 0)
        // Early in a second, so both choose within it on all but a very slow machine.
        let now = Date().timeIntervalSince1970
        usleep(useconds_t((now.rounded(.up) - now + 0.05) * 1_000_000))
        let sessions = try (0..<2).map { _ in try TerminalSession(harkCommand(["record", "-D", "filecap", "-d", "1"]), rig: rig) }
        for session in sessions { #expect(session.waitFor(promptQuestion), "\(session.screen)") }
        for session in sessions { session.type("o\n") }
        for session in sessions {
            let result = session.finish()
            #expect(result.status == 0, "\(result.screen)")
        }
        let saved = libraryFiles(rig.path("Recordings"))
        #expect(saved.count == 2, "\(saved)")
        // Both chose the same name unless a slow start put them in different seconds.
        if Set(saved.map { $0.prefix("rec-20261127-064415".count) }).count == 1 {
            #expect(saved.contains { $0.hasSuffix("-2.flac") }, "\(saved)")
        } else {
            print("RecordingsLibraryTests: the two recordings started in different seconds (\(saved)); no name was contested")
        }
        for name in saved {
            try expectSameElements(FLACTools.decode(rig.path("Recordings/\(name)"), bitsPerSample: 16), signal.samples, name)
        }
        let listed = String(decoding: try runHark(["list"], rig: rig).standardOutput, as: UTF8.self)
            .split(separator: "\n").compactMap { $0.split(separator: "/").last.map(String.init) }
        #expect(listed.sorted() == saved, "hark list names both files: \(listed)")
        #expect(RepairTools.hiddenFiles(in: rig.path("Recordings")).filter { $0.contains(".hark-") }.isEmpty)
    }

    /// The access log keeps its latest entries only; once older ones are gone, `hark list` says
    /// from when it lists instead of claiming nothing was saved before.
    @Test func onceTheLogHasRotatedTheListSaysFromWhenItKnows() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        #expect(try runHark(["permissions", "grant", "recordings"], rig: rig).status == 0)
        func record() throws {
            let result = try runHark(["record", "-D", "filecap", "-d", "0.5"], rig: rig)
            #expect(result.status == 0, "\(result.standardError)")
            sleep(1)  // a name of its own second
        }
        /// Lines hark skips (no "end"), enough to make the next entry rotate the log.
        func pad() throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: rig.accessLogFile))
            handle.seekToEndOfFile()
            handle.write(Data(String(repeating: "{\"pad\":\"\(String(repeating: "x", count: 1000))\"}\n", count: 1100).utf8))
            try handle.close()
        }
        try record()
        try pad()
        try record()
        try pad()
        try record()
        let saved = libraryFiles(rig.path("Recordings"))
        #expect(saved.count == 3, "\(saved)")
        let listed = try runHark(["list"], rig: rig)
        #expect(listed.status == 0)
        let lines = String(decoding: listed.standardOutput, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2 && !lines.contains { $0.hasSuffix(saved[0]) }, "the first is gone from the log: \(lines)")
        #expect(listed.errorLines.count == 1 && listed.standardError.contains("the access log keeps only its latest entries: recordings saved before 20"),
                "\(listed.standardError)")
    }
}
