import FoundationEssentials

/// The administrator's policy, `<system dir>/policy.json`, which can restrict the microphone for
/// every app or for listed app identifiers:
///
///     { "microphone": { "restricted": true } }
///     { "microphone": { "restricted": ["org.example.recorder", "dev.hark.cli"] } }
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

    private struct File: Decodable {
        var microphone: Rule?
    }

    private struct Rule: Decodable {
        var restricted: Restriction?
    }

    private enum Restriction: Decodable {
        case everyone(Bool)
        case apps([String])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .everyone(flag)
            } else {
                self = .apps(try container.decode([String].self))
            }
        }
    }

    func verdict(for resource: PermissionResource, appIdentifier: String) -> Verdict {
        let bytes: [UInt8]
        do {
            guard let contents = try readPolicy() else { return .unrestricted }
            bytes = contents
        } catch {
            return .restricted(reason: "restricted: the administrator's policy \(path) cannot be read")
        }
        guard let file = try? JSONDecoder().decode(File.self, from: Data(bytes)) else {
            return .restricted(reason: "restricted: the administrator's policy \(path) is not valid")
        }
        let rule: Rule? = switch resource {
        case .microphone: file.microphone
        }
        switch rule?.restricted {
        case .everyone(true): return .restricted(reason: "restricted by the administrator (\(path))")
        case .apps(let apps) where apps.contains(appIdentifier):
            return .restricted(reason: "restricted by the administrator for \(appIdentifier) (\(path))")
        default: return .unrestricted
        }
    }

    /// The policy's bytes; nil when there is no policy. Unlike the user's store, the policy is owned
    /// by root and readable by all, so only its type and size are checked.
    private func readPolicy() throws -> [UInt8]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 256 * 1024 else {
            throw SecureFile.Problem.notRegularFile
        }
        return Array(data)
    }
}
