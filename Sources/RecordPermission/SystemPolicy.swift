/// The administrator's policy, `<system dir>/policy.json`, which can restrict the microphone (or
/// system audio) for every app or for listed app identifiers:
///
///     { "microphone": { "restricted": true } }
///     { "microphone": { "restricted": ["org.example.recorder", "dev.hark.cli"] } }
///
/// System audio (a monitor source) has its own key, `systemAudio`; where the file has none, the
/// microphone's rule covers it: a monitor was recorded on the microphone's grant until system
/// audio got its own, and a policy written then must not start to allow it.
///
/// Restricted means no prompt and no grant, whatever the user's store says. A policy file that
/// exists but cannot be read or parsed restricts everything: the administrator's intent is unknown,
/// so the gate fails closed.
struct SystemPolicy {
    let path: String

    enum Verdict: Equatable {
        case unrestricted
        case restricted(reason: String)
    }

    static let maxBytes = 256 * 1024

    /// What the file says about one resource.
    private enum Restriction: Equatable {
        case nobody
        case everyone
        case apps([String])
    }

    func verdict(for resource: PermissionResource, appIdentifier: String) -> Verdict {
        let bytes: [UInt8]
        do throws(SecureFile.Problem) {
            guard let contents = try SecureFile.readShared(path, maxBytes: Self.maxBytes) else { return .unrestricted }
            bytes = contents
        } catch {
            return .restricted(reason: "restricted: the administrator's policy \(path) cannot be read")
        }
        guard let json = try? JSONValue(parsing: bytes, maxBytes: Self.maxBytes),
              let restriction = Self.restriction(of: resource, in: json) else {
            return .restricted(reason: "restricted: the administrator's policy \(path) is not valid")
        }
        switch restriction {
        case .everyone: return .restricted(reason: "restricted by the administrator (\(path))")
        case .apps(let apps) where apps.contains(appIdentifier):
            return .restricted(reason: "restricted by the administrator for \(appIdentifier) (\(path))")
        default: return .unrestricted
        }
    }

    /// The rule for `resource`, read as the `Decodable` structs this replaces read it: the document
    /// must be an object; its resource key, when present and not null, an object; that object's
    /// `restricted`, when present and not null, a boolean or an array of strings. Other keys are
    /// ignored, for rules a later version may add. Nil when the file breaks these rules.
    private static func restriction(of resource: PermissionResource, in json: JSONValue) -> Restriction? {
        guard let file = json.objectValue else { return nil }
        let key = resource == .systemAudio && file[resource.rawValue] == nil ? PermissionResource.microphone.rawValue : resource.rawValue
        guard let rule = file[key], rule != .null else { return .nobody }
        guard let members = rule.objectValue else { return nil }
        switch members["restricted"] {
        case nil, .null?: return .nobody
        case .bool(let flag)?: return flag ? .everyone : .nobody
        case .array(let elements)?:
            let apps = elements.compactMap(\.stringValue)
            return apps.count == elements.count ? .apps(apps) : nil
        default: return nil
        }
    }
}
