/// The store file's JSON, byte for byte as Foundation's `JSONEncoder` wrote it with
/// `[.prettyPrinted, .sortedKeys]` and ISO 8601 dates, so stores move freely between this version
/// and earlier ones:
///
///     {
///       "app" : "dev.hark.cli",
///       "decisions" : {
///         "microphone" : {
///           "setBy" : "command",
///           "status" : "authorized",
///           "updated" : "2026-11-22T02:21:56Z"
///         }
///       },
///       "format" : 1
///     }
///
/// Reading is as demanding as `JSONDecoder` was with the `Codable` types it replaces: every key
/// above must be there with a value of the right type (a `null` counts as missing), every decision
/// must read, even one for a resource this version does not know, and unknown keys are ignored.
/// Anything less is not a record, and the store then never grants.
extension PermissionStore.Record {
    init?(storeBytes: [UInt8]) {
        guard let json = try? JSONValue(parsing: storeBytes, maxBytes: PermissionStore.maxBytes),
              let format = json["format"]?.exactInt, let app = json["app"]?.stringValue,
              let members = json["decisions"]?.objectValue else { return nil }
        var decisions: [String: PermissionStore.Decision] = [:]
        for (resource, member) in members {
            guard let decision = PermissionStore.Decision(json: member) else { return nil }
            decisions[resource] = decision
        }
        self.init(format: format, app: app, decisions: decisions)
    }

    /// The file's bytes, newline-terminated; nil when a time cannot be written as ISO 8601.
    var storeBytes: [UInt8]? {
        var members: [String: JSONValue] = [:]
        for (resource, decision) in decisions {
            guard let json = decision.json else { return nil }
            members[resource] = json
        }
        let record: JSONValue = .object(["format": .number(Double(format)), "app": .string(app), "decisions": .object(members)])
        return record.serialized(.indented) + [0x0A]
    }
}

extension PermissionStore.Decision {
    /// Nil unless it is a decision the user can make: authorized or denied. A store saying
    /// "restricted" (which only the administrator's policy can) or "notDetermined" (no decision
    /// is stored as none) was edited by hand, and is as damaged as one that cannot be parsed; read
    /// as it says, it was reported as the administrator's restriction.
    init?(json: JSONValue) {
        guard let status = json["status"]?.stringValue.flatMap(AuthorizationStatus.init(rawValue:)),
              status == .authorized || status == .denied,
              let setBy = json["setBy"]?.stringValue,
              let updated = json["updated"]?.stringValue.flatMap(WallClockTime.init(iso8601:)) else { return nil }
        self.init(status: status, setBy: setBy, updated: updated)
    }

    var json: JSONValue? {
        guard let updated = updated.iso8601 else { return nil }
        return .object(["status": .string(status.rawValue), "setBy": .string(setBy), "updated": .string(updated)])
    }
}
