/// The record-permission gate: Apple's authorization model (AVCaptureDevice's
/// `authorizationStatus(for:)` and `requestAccess(for:)`, TCC's remembered decisions and
/// `tccutil reset`), made for a terminal.
///
///     let gate = PermissionGate(manifest: manifest)
///     switch gate.requestAccess(for: .audio) {
///     case .granted(let grant): try CaptureDevice(opening: request, grant: grant)
///     case .refused(let refusal): print(refusal)   // exit 77
///     }
///
/// Order of precedence: an administrator's restriction, then the desktop's microphone switch
/// (microphone only), then an untrusted store (never grants), then the stored decision, then the prompt.
public struct PermissionGate: Sendable {
    public let manifest: AppManifest
    public let locations: PermissionLocations
    /// GNOME's Settings › Privacy › Microphone; off means `restricted` for the microphone.
    public let desktopSwitch: DesktopPrivacySwitch

    /// The app identifier of hark itself, the "Settings app" whose `permissions` commands change
    /// decisions for every app that embeds this gate.
    public static let settingsAppIdentifier = "dev.hark.cli"

    public init(manifest: AppManifest, locations: PermissionLocations = .current(),
                desktopSwitch: DesktopPrivacySwitch = .shared) {
        self.manifest = manifest
        self.locations = locations
        self.desktopSwitch = desktopSwitch
    }

    var store: PermissionStore { PermissionStore(locations: locations, appIdentifier: manifest.appIdentifier) }
    var policy: SystemPolicy { SystemPolicy(path: locations.policyFile) }

    // MARK: Status (never prompts)

    /// The current status. Never prompts. An untrusted store reads as `denied`.
    public func authorizationStatus(for mediaType: MediaType) -> AuthorizationStatus {
        statusDetail(for: mediaType.resource).status
    }

    /// The status with where it comes from, for `hark permissions`.
    public func statusDetail(for resource: PermissionResource) -> StatusDetail {
        if let reason = restriction(of: resource) {
            return StatusDetail(resource: resource, status: .restricted, setBy: nil, updated: nil, note: reason)
        }
        do throws(StoreProblem) {
            guard let decision = try store.decision(for: resource) else {
                return StatusDetail(resource: resource, status: .notDetermined, setBy: nil, updated: nil, note: nil)
            }
            return StatusDetail(resource: resource, status: decision.status, setBy: decision.setBy,
                                updated: decision.updated, note: nil)
        } catch {
            return StatusDetail(resource: resource, status: .denied, setBy: nil, updated: nil, note: error.description)
        }
    }

    /// Why `resource` is restricted now, or nil: the administrator's policy, or (the microphone)
    /// the desktop's switch, which is the user's own but like a restriction not hark's to override
    /// or to ask past: no prompt while it is off.
    private func restriction(of resource: PermissionResource) -> String? {
        if case .restricted(let reason) = policy.verdict(for: resource, appIdentifier: manifest.appIdentifier) { return reason }
        if resource == .microphone, desktopSwitch.forbidsMicrophone {
            return "turned off in the desktop's privacy settings; turn it back on in \(DesktopPrivacySwitch.settingsPlace)"
        }
        return nil
    }

    // MARK: Requesting access

    /// Returns a grant when the user allows `mediaType`, prompting only when the status is
    /// `notDetermined`. Stops the program first if the manifest lacks the purpose string.
    public func requestAccess(for mediaType: MediaType, prompt: any ConsentPrompting = TerminalPrompt()) -> AccessResult {
        switch decide(mediaType.resource, prompt: prompt) {
        case .success(let consent):
            .granted(CaptureGrant(manifest: manifest, consent: consent.source, resource: mediaType.resource,
                                  answeredAgainst: consent.answeredAgainst))
        case .failure(let refusal): .refused(refusal)
        }
    }

    /// Returns a grant to add recordings to the user's recordings library, as PhotoKit's
    /// `requestAuthorization(for: .addOnly)` does for the photo library: prompting only when the
    /// status is `notDetermined`, stopping the program first if the manifest lacks the purpose
    /// string (`NSRecordingsLibraryAddUsageDescription`). The grant adds files; it never reads,
    /// lists or replaces what the library holds.
    public func requestAccess(for level: LibraryAccessLevel, prompt: any ConsentPrompting = TerminalPrompt()) -> LibraryAccessResult {
        switch decide(level.resource, prompt: prompt) {
        case .success(let consent): .granted(LibraryAddGrant(manifest: manifest, consent: consent.source))
        case .failure(let refusal): .refused(refusal)
        }
    }

    /// Returns a grant only when the user has already allowed `mediaType` (the status is
    /// `authorized`); never prompts. For commands that open a device without recording — listing
    /// what it accepts — where asking would be out of place, so the gate still holds and the
    /// refusal says how to allow access. Stops the program first if the manifest lacks the purpose string.
    public func existingGrant(for mediaType: MediaType) -> AccessResult {
        let resource = mediaType.resource
        manifest.requireUsageDescription(for: resource)
        switch decidedAccess(to: resource) {
        case .success(let consent)?: return .granted(CaptureGrant(manifest: manifest, consent: consent, resource: resource))
        case .failure(let refusal)?: return .refused(refusal)
        case nil: return .refused(AccessRefusal(kind: .notDetermined, message: "\(manifest.displayName) has not been allowed to use \(resource.displayName) yet; allow it with '\(grantCommand(resource))'"))
        }
    }

    /// The outcome when the status is decided (authorized, restricted or denied); nil when it is
    /// `notDetermined`.
    private func decidedAccess(to resource: PermissionResource) -> Result<ConsentSource, AccessRefusal>? {
        let detail = statusDetail(for: resource)
        let subject = resource.accessName.capitalizedFirst
        switch detail.status {
        case .authorized:
            return .success(.stored)
        case .restricted:
            return .failure(AccessRefusal(kind: .restricted, message: "\(subject) access is \(detail.note ?? "restricted by the administrator")"))
        case .denied:
            if let problem = detail.note {
                return .failure(AccessRefusal(kind: .untrustedStore, message: problem))
            }
            return .failure(AccessRefusal(kind: .denied, message: "\(manifest.displayName) is not allowed to use \(resource.displayName)\(detail.sinceText); allow it with '\(grantCommand(resource))'"))
        case .notDetermined:
            return nil
        }
    }

    /// A consent, and for an answer at the prompt the store as it was when the answer came: a
    /// `deny` or `reset` made while the prompt waited is older than the answer, which then stands
    /// (`PermissionWatch.startsFrom`), where one made after it stops the recording.
    private struct Consent {
        let source: ConsentSource
        var answeredAgainst: StoreMoment?
    }

    /// The store as it is now, for an answer just given at the prompt.
    private func storeMoment(for resource: PermissionResource) -> StoreMoment {
        StoreMoment(revocationToken: store.revocationToken(for: resource), storeFingerprint: SecureFile.fingerprint(store.path))
    }

    /// The shared decision: policy, then the store, then the prompt.
    private func decide(_ resource: PermissionResource, prompt: any ConsentPrompting) -> Result<Consent, AccessRefusal> {
        manifest.requireUsageDescription(for: resource)
        if let decided = decidedAccess(to: resource) { return decided.map { Consent(source: $0) } }
        let subject = resource.accessName.capitalizedFirst
        guard let answer = prompt.ask(appName: manifest.displayName, resource: resource,
                                      purpose: manifest.usageDescription(for: resource)!) else {
            return .failure(AccessRefusal(kind: .notDeterminedWithoutTerminal, message: "\(manifest.displayName) has not been allowed to use \(resource.displayName) and there is no terminal to ask on; allow it with '\(grantCommand(resource))'"))
        }
        // A restriction made while the prompt waited (the policy, the desktop's switch) is not
        // answered past: the device would open, and the watch stop it only after some audio.
        if answer == .allow || answer == .allowOnce, let reason = restriction(of: resource) {
            return .failure(AccessRefusal(kind: .restricted, message: "\(subject) access is \(reason)"))
        }
        switch answer {
        case .allow:
            let moment = storeMoment(for: resource)
            let stored = (try? store.write(.authorized, for: resource, setBy: "prompt")) != nil
            return .success(Consent(source: stored ? .prompt : .once, answeredAgainst: moment))
        case .allowOnce:
            return .success(Consent(source: .once, answeredAgainst: storeMoment(for: resource)))
        case .deny:
            try? store.write(.denied, for: resource, setBy: "prompt")
            return .failure(AccessRefusal(kind: .denied, message: "\(subject) access was not allowed; change it with '\(grantCommand(resource))'"))
        case .dismissed(let reason):
            return .failure(AccessRefusal(kind: .dismissed, message: "\(subject) access was not allowed (\(reason)); nothing was remembered"))
        }
    }

    /// AVFoundation's shape: true when access is granted. Prefer `requestAccess(for:prompt:)`,
    /// whose grant is what opens a capture device.
    public func requestAccess(for mediaType: MediaType) async -> Bool {
        if case .granted = requestAccess(for: mediaType, prompt: TerminalPrompt()) { return true }
        return false
    }

    // MARK: Settings (hark permissions grant / deny / reset)

    /// Stores the user's decision, as the Settings app does. Refused when the administrator has
    /// restricted the resource or the store is untrusted (reset first).
    public func setDecision(_ status: AuthorizationStatus, for resource: PermissionResource) throws(PermissionChangeError) {
        precondition(status == .authorized || status == .denied, "only authorized or denied can be stored")
        if case .restricted(let reason) = policy.verdict(for: resource, appIdentifier: manifest.appIdentifier) {
            throw PermissionChangeError(message: "\(resource.accessName.capitalizedFirst) access is \(reason); it cannot be changed")
        }
        do throws(StoreProblem) {
            try store.write(status, for: resource, setBy: "command")
        } catch {
            throw PermissionChangeError(message: error.description, isWriteFailure: error.isWriteFailure)
        }
    }

    /// Forgets the decision for `resource`, or all of them (`tccutil reset`). Also repairs an
    /// untrusted store, by removing it: true then, as every decision was forgotten.
    @discardableResult
    public func reset(_ resource: PermissionResource?) throws(PermissionChangeError) -> Bool {
        do throws(StoreProblem) {
            return try store.reset(resource)
        } catch {
            throw PermissionChangeError(message: error.description, isWriteFailure: error.isWriteFailure)
        }
    }

    func grantCommand(_ resource: PermissionResource) -> String {
        let app = manifest.appIdentifier == Self.settingsAppIdentifier ? "" : " --app \(manifest.appIdentifier)"
        return "hark permissions grant \(resource.rawValue)\(app)"
    }
}

/// The outcome of `requestAccess(for: .audio)`.
public enum AccessResult: Sendable {
    case granted(CaptureGrant)
    case refused(AccessRefusal)
}

/// The outcome of `requestAccess(for: .addOnly)`.
public enum LibraryAccessResult: Sendable {
    case granted(LibraryAddGrant)
    case refused(AccessRefusal)
}

/// Why access was refused, with the one line to show the user.
public struct AccessRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case denied, restricted, notDeterminedWithoutTerminal, dismissed, untrustedStore
        /// Not decided yet, and the caller does not ask (`existingGrant(for:)`).
        case notDetermined
    }
    public let kind: Kind
    public let message: String
    public var description: String { message }
}

/// A `permissions grant/deny/reset` that could not be carried out.
public struct PermissionChangeError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// Whether the decision could not be written (a full or read-only disk), rather than refused.
    public var isWriteFailure = false
    public var description: String { message }

    public init(message: String, isWriteFailure: Bool = false) {
        self.message = message
        self.isWriteFailure = isWriteFailure
    }
}

/// A resource's status and where it comes from.
public struct StatusDetail: Sendable, Equatable {
    public let resource: PermissionResource
    public let status: AuthorizationStatus
    /// "prompt" or "command" for stored decisions.
    public let setBy: String?
    public let updated: WallClockTime?
    /// The restriction, or the store's problem.
    public let note: String?

    var sinceText: String {
        guard let updated, let setBy else { return "" }
        let how = setBy == "prompt" ? "at the prompt" : "with 'hark permissions'"
        return " (chosen \(how) on \(updated))"
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
