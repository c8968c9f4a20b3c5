import ArgumentParser
import RecordPermission
import Recorder

/// `hark permissions`: the Settings pane for the record-permission gate.
struct PermissionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "permissions",
        abstract: "Show and change who may use the microphone, the system's audio and your recordings library (like Settings › Privacy, and tccutil).",
        subcommands: [Status.self, Grant.self, Deny.self, Reset.self, Log.self],
        defaultSubcommand: Status.self
    )
}

/// Which app's decisions a `permissions` command reads or changes.
struct AppOption: ParsableArguments {
    @Option(help: ArgumentHelp("The app identifier; hark's own by default.",
                               valueName: "identifier"))
    var app: String = PermissionGate.settingsAppIdentifier

    func validate() throws {
        try Self.check(app)
    }

    /// Refuses what cannot be an app identifier (it names a file of the permission store).
    static func check(_ app: String) throws {
        guard !app.isEmpty, app.first != ".", app.count <= 200,
              app.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
            throw ValidationError("'\(app)' is not an app identifier (letters, digits, '.', '-', '_')")
        }
    }

    /// A gate for this app. Changing decisions needs no purpose string, so another app's can be
    /// managed without its manifest.
    var gate: PermissionGate {
        app == PermissionGate.settingsAppIdentifier
            ? HarkManifest.gate
            : PermissionGate(manifest: AppManifest(appIdentifier: app, displayName: app, microphoneUsageDescription: nil))
    }
}

/// The resource argument of grant/deny/reset.
extension PermissionResource: ExpressibleByArgument {}

extension PermissionsCommand {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show each resource's status, how it was set and when.")
        @OptionGroup var app: AppOption

        func run() throws {
            var text = ""
            for resource in PermissionResource.allCases {
                let detail = app.gate.statusDetail(for: resource)
                text += "\(resource.rawValue): \(describe(detail, resource))\n"
            }
            text += "desktop microphone switch: \(describeDesktopSwitch())\n"
            print(text, terminator: "")
        }

        /// The desktop's own switch, which restricts the microphone for every app while it is off;
        /// said even when it cannot be read, since it is then not applied.
        private func describeDesktopSwitch() -> String {
            switch app.gate.desktopSwitch.reading() {
            case .microphoneOn: "on (\(DesktopPrivacySwitch.settingsPlace))"
            case .microphoneOff: "off: the microphone is restricted for every app (\(DesktopPrivacySwitch.settingsPlace))"
            case .absent: "none on this desktop"
            case .unreadable(let reason): "cannot be read, so it is not applied (\(reason))"
            }
        }

        private func describe(_ detail: StatusDetail, _ resource: PermissionResource) -> String {
            // The policy's reasons begin with "restricted" themselves.
            if let note = detail.note, detail.status == .restricted { return note.hasPrefix("restricted") ? note : "restricted — \(note)" }
            if let note = detail.note { return "denied — \(note)" }
            switch detail.status {
            case .notDetermined:
                let when = switch resource {
                case .recordings: "next recording saved to the library"
                case .systemAudio: "next recording of system audio (a monitor source)"
                case .microphone: "next recording"
                }
                return "not determined (\(app.app == PermissionGate.settingsAppIdentifier ? "hark" : app.app) will ask on the terminal at the \(when))"
            case .authorized, .denied, .restricted:
                let how = detail.setBy == "prompt" ? "at the prompt" : "with 'hark permissions'"
                let when = detail.updated.map { " on \($0.localText)" } ?? ""
                return "\(detail.status) (\(how)\(when))"
            }
        }
    }

    struct Grant: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Allow the app to use a resource from now on.")
        @Argument(help: "The resource: microphone, systemAudio (monitor sources: what the system plays), or recordings (adding to your recordings library).") var resource: PermissionResource
        @OptionGroup var app: AppOption

        func run() throws {
            try change { try app.gate.setDecision(.authorized, for: resource) }
            Console.notice("\(resource.rawValue) allowed for \(app.app)")
        }
    }

    struct Deny: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Refuse a resource; a recording from the microphone or system audio running under it stops within a second.")
        @Argument(help: "The resource: microphone, systemAudio (monitor sources: what the system plays), or recordings (adding to your recordings library).") var resource: PermissionResource
        @OptionGroup var app: AppOption

        func run() throws {
            try change { try app.gate.setDecision(.denied, for: resource) }
            Console.notice("\(resource.rawValue) denied for \(app.app)")
        }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget decisions (all, or one resource), so the next recording asks again; repairs a damaged store.")
        @Argument(help: "The resource to forget; all when omitted.") var resource: PermissionResource?
        @OptionGroup var app: AppOption

        func run() throws {
            var removedWholeStore = false
            try change { removedWholeStore = try app.gate.reset(resource) }
            let forgotten = removedWholeStore ? PermissionResource.allCases : resource.map { [$0] } ?? PermissionResource.allCases
            let what = if let resource, removedWholeStore {
                "\(app.app)'s permission store could not be trusted, so it was removed: every decision is reset, not only \(resource.rawValue)'s"
            } else {
                "\(resource?.rawValue ?? "all decisions") reset for \(app.app)"
            }
            // A restriction outlives the reset: nothing will ask while it holds.
            let restricted = forgotten.filter { app.gate.statusDetail(for: $0).status == .restricted }.map(\.rawValue)
            let next = restricted.isEmpty ? "the next recording will ask"
                : "\(restricted.joined(separator: " and ")) \(restricted.count == 1 ? "stays" : "stay") restricted, so nothing will ask"
            Console.notice("\(what); \(next)")
        }
    }

    struct Log: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List past recordings from the access log.")
        @Flag(help: "Print each recording's entry as the JSON line the log stores (the log's lines that track a recording under way are left out).")
        var json = false
        @Option(help: ArgumentHelp("Only recordings that started at or after this time: an ISO 8601 date or time, "
                                   + "local unless it names its zone (2026-11-21, 2026-11-21T09:00:00, 2026-11-21T09:00:00Z), "
                                   + "or an age such as 30m, 12h, 7d.",
                                   valueName: "time")) var since: String?
        @Option(help: ArgumentHelp("Only this app's recordings (every app's by default).", valueName: "id"))
        var app: String?

        func validate() throws {
            if let app { try AppOption.check(app) }
            if let since, LogFilter.startTime(since, now: .now()) == nil {
                throw ValidationError("cannot read '\(since)' as a time; use 2026-11-21, 2026-11-21T09:00:00 (local), 2026-11-21T09:00:00Z, 30m, 12h or 7d")
            }
        }

        func run() throws {
            let threshold = since.flatMap { LogFilter.startTime($0, now: .now()) }
            let log = AccessLog()
            let entries = log.entries().filter { (threshold == nil || $0.start >= threshold!) && (app == nil || $0.app == app) }
            let untrusted = log.untrustedParts()
            var text = ""
            for entry in entries {
                if json {
                    text += entry.jsonLine + "\n"
                } else {
                    let seconds = Double(entry.frames) / Double(Self.sampleRate(entry.format) ?? 1)
                    // A sound-activated recording's segments are entries of their own, beside the
                    // recording's (the whole time the microphone was open), which names their files too.
                    let output = entry.output.isEmpty ? "(nothing recorded)" : entry.output.shownOnTerminal
                    let segment = entry.segment.map { "segment \($0): " } ?? ""
                    text += "\(entry.start.localText)  \(entry.app.shownOnTerminal)  \(entry.device.shownOnTerminal) → \(segment)\(output)  "
                        + "\(SecondsText.format(seconds)) s (\(entry.frames) frames, \(entry.format))  consent: \(entry.consent.rawValue)  "
                        + "ended: \(entry.ended.shownOnTerminal)"
                        + ((entry.framesDropped ?? 0) > 0 ? "  dropped: \(entry.framesDropped!) frames"
                            + (entry.framesDroppedPadded.map { " (\($0) padded with silence)" } ?? "") : "")
                        + ((entry.overruns ?? 0) > 0 ? "  overruns: \(entry.overruns!) (\(entry.framesLostToOverruns ?? 0) frames lost"
                            + (entry.framesPadded.map { ", \($0) padded with silence" } ?? "") + ")" : "")
                        + "\n"
                }
            }
            print(text, terminator: "")
            try failIfUntrusted(untrusted)
        }

        /// The sample rate in a log entry's format text ("S16_LE, 2 ch, 48000 Hz, flac").
        static func sampleRate(_ format: String) -> Int? {
            format.split(separator: ",").lazy.compactMap { part -> Int? in
                let words = part.split(separator: " ")
                return words.count == 2 && words[1] == "Hz" ? Int(words[0]) : nil
            }.first
        }
    }
}

/// Runs a change of a decision, turning its error into one line and exit 77, or 74 when the
/// decision could not be written (a full or read-only disk).
private func change(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as PermissionChangeError {
        throw CommandFailure(message: error.message, exitCode: error.isWriteFailure ? ExitStatus.ioError : ExitStatus.noPermission)
    }
}

enum LogFilter {
    /// Parses `--since`: an ISO 8601 date or date-time, in local time unless it names its zone
    /// (`2026-11-21` is local midnight), or an age (`30m`, `12h`, `7d`, `90s`).
    static func startTime(_ text: String, now: WallClockTime) -> WallClockTime? {
        if let unit = text.last, let amount = Double(text.dropLast()), amount >= 0 {
            let scale: Double? = switch unit {
            case "s": 1
            case "m": 60
            case "h": 3600
            case "d": 86_400
            default: nil
            }
            if let scale { return now.advanced(by: -amount * scale) }
        }
        return WallClockTime(localISO8601: text)
    }
}
