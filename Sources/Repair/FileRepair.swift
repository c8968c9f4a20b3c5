#if canImport(Glibc)
import Glibc
#endif

/// What `hark repair` did with one file.
public struct RepairOutcome: Sendable {
    public enum Result: Sendable {
        /// The file was whole: nothing written.
        case sound
        /// Damaged and repairable; a dry run, so nothing written.
        case wouldRepair
        /// Repaired in place; the original kept at this path when asked.
        case repaired(backup: String?)
        /// Not repairable (or could not be read or written); the text says why. Nothing changed.
        case failed(RepairFailure)
    }

    public let path: String
    public let analysis: RepairAnalysis?
    public let result: Result
    /// What the file was recognised as: the analysis's, or (when the analysis itself failed) the
    /// container its first bytes named.
    public let container: RepairAnalysis.Container?

    public init(path: String, analysis: RepairAnalysis?, result: Result, container: RepairAnalysis.Container? = nil) {
        self.path = path
        self.analysis = analysis
        self.result = result
        self.container = container ?? analysis?.container
    }

    /// The line `hark repair` prints for the file.
    public var line: String {
        let container = self.container.map { " (\($0.rawValue))" } ?? ""
        let problems = analysis?.problems.joined(separator: "; ") ?? ""
        let seconds = analysis.map { durationText($0.seconds) } ?? ""
        switch result {
        case .sound:
            return "\(path): nothing to do\(container.isEmpty ? "" : " (\(analysis!.container.rawValue), \(seconds))")"
        case .wouldRepair:
            return "\(path): would repair\(container): \(problems); \(seconds) of audio to keep (--write repairs it)"
        case .repaired(let backup):
            return "\(path): repaired\(container): \(problems); \(seconds) of audio kept" + (backup.map { "; the original is \($0)" } ?? "")
        case .failed(let failure):
            let verb = failure.kind == .cannotRepair || failure.kind == .unrecognised ? "cannot repair" : "not repaired"
            return "\(path): \(verb)\(container): \(failure.message)"
        }
    }
}

/// `hark repair` for one file: recognises FLAC, Ogg Opus or WAV by its first bytes, analyses it,
/// and writes the repair when asked.
public enum FileRepair {
    public static func repair(_ path: String, write: Bool, keep: Bool, shouldStop: @escaping () -> Bool = { false }) -> RepairOutcome {
        let file: MappedFile
        do throws(RepairFailure) {
            file = try MappedFile(path: path)
        } catch {
            return RepairOutcome(path: path, analysis: nil, result: .failed(error))
        }
        // hark record holds a shared lock on a file it is writing (OutputTarget).
        guard flock(file.descriptor, LOCK_EX | LOCK_NB) == 0 else {
            return RepairOutcome(path: path, analysis: nil, result: .failed(RepairFailure(.inUse, "it is being recorded; repair it once the recording has ended")))
        }
        let container: RepairAnalysis.Container
        do throws(RepairFailure) {
            container = try recognise(file)
        } catch {
            return RepairOutcome(path: path, analysis: nil, result: .failed(error))
        }
        let analysis: RepairAnalysis
        do throws(RepairFailure) {
            analysis = try file.withBytes { (bytes) throws(RepairFailure) in try analyse(bytes, as: container, shouldStop: shouldStop) }
        } catch {
            return RepairOutcome(path: path, analysis: nil, result: .failed(error), container: container)
        }
        switch analysis.verdict {
        case .sound:
            return RepairOutcome(path: path, analysis: analysis, result: .sound)
        case .unrepairable(let why):
            return RepairOutcome(path: path, analysis: analysis, result: .failed(RepairFailure(.cannotRepair, why)))
        case .repairable(let plan):
            guard write else { return RepairOutcome(path: path, analysis: analysis, result: .wouldRepair) }
            guard let resolved = realpath(path, nil) else {
                return RepairOutcome(path: path, analysis: analysis, result: .failed(RepairFailure(.cannotOpen, "cannot resolve its path")))
            }
            let destination = String(cString: resolved)
            free(resolved)
            // A file its owner made read-only (or on a read-only mount) is not replaced by a
            // writable copy behind their back, as metaflac refuses it too.
            guard access(destination, W_OK) == 0 else {
                let code = errno
                let why = code == EROFS ? "the file system is read-only" : "it is read-only (\(String(cString: strerror(code))))"
                return RepairOutcome(path: path, analysis: analysis, result: .failed(RepairFailure(.cannotCreate, "cannot write it: \(why); nothing changed")))
            }
            if shouldStop() {
                return RepairOutcome(path: path, analysis: analysis, result: .failed(RepairFailure(.interrupted, "interrupted; the original is unchanged")))
            }
            do throws(RepairFailure) {
                // In place when the plan keeps the audio where it is; else (or to keep the
                // original) a copy beside it, renamed over it.
                if !keep, let inPlace = InPlaceRepairWriter(original: file, destination: destination, plan: plan),
                   try inPlace.write(verify: { bytes in verify(bytes, as: container, shouldStop: shouldStop) }) {
                    return RepairOutcome(path: path, analysis: analysis, result: .repaired(backup: nil))
                }
                let writer = RepairWriter(original: file, destination: destination, shouldStop: shouldStop)
                let backup = try writer.write(plan, keep: keep) { bytes in verify(bytes, as: container, shouldStop: shouldStop) }
                    .map { backupName($0, resolvedFrom: destination, asNamed: path) }
                return RepairOutcome(path: path, analysis: analysis, result: .repaired(backup: backup))
            } catch {
                return RepairOutcome(path: path, analysis: analysis, result: .failed(error))
            }
        }
    }

    /// The backup as the user named the file ("talk.flac.orig" beside "talk.flac"), not by its
    /// resolved path; by that path when the name given is a symbolic link, whose target got the
    /// backup beside it.
    private static func backupName(_ backup: String, resolvedFrom destination: String, asNamed path: String) -> String {
        let asNamed = path + backup.dropFirst(destination.count)
        guard let resolved = realpath(asNamed, nil) else { return backup }
        defer { free(resolved) }
        return String(cString: resolved) == backup ? asNamed : backup
    }

    static func recognise(_ file: MappedFile) throws(RepairFailure) -> RepairAnalysis.Container {
        let container: RepairAnalysis.Container? = file.withBytes { bytes in
            if bytes.matches("fLaC", at: 0) || FLACMetadata.id3v2TagPrecedesFLAC(bytes) { return .flac }
            if bytes.matches("OggS", at: 0) { return .oggOpus }
            if bytes.matches("RIFF", at: 0) || bytes.matches("RF64", at: 0) || bytes.matches("BW64", at: 0) { return .wav }
            return nil
        }
        guard let container else {
            throw RepairFailure(.unrecognised, file.size == 0 ? "the file is empty: nothing to recover" : "not a FLAC, Ogg Opus or WAV file")
        }
        return container
    }

    static func analyse(_ bytes: UnsafeRawBufferPointer, as container: RepairAnalysis.Container,
                        shouldStop: @escaping () -> Bool = { false }) throws(RepairFailure) -> RepairAnalysis {
        switch container {
        case .flac: try FLACRepair.analyse(bytes, shouldStop: shouldStop)
        case .oggOpus: try OggOpusRepair.analyse(bytes, shouldStop: shouldStop)
        case .wav: try WAVRepair.analyse(bytes)
        }
    }

    /// What `verify` says when a stop signal ended its check: the writer then puts the original
    /// back and reports the repair interrupted.
    static let interruptedCheck = "interrupted"

    static func verify(_ bytes: UnsafeRawBufferPointer, as container: RepairAnalysis.Container,
                       shouldStop: @escaping () -> Bool = { false }) -> String? {
        switch container {
        case .flac: FLACRepair.verify(bytes, shouldStop: shouldStop)
        case .oggOpus: OggOpusRepair.verify(bytes, shouldStop: shouldStop)
        case .wav: WAVRepair.verify(bytes)
        }
    }
}
