/// Vorbis comments (`KEY=VALUE`) written into FLAC's VORBIS_COMMENT block and Ogg Opus's OpusTags,
/// in order, exactly as given: which tags a recording carries is the recorder's decision.
///
/// A key may repeat: Vorbis comments give a field several values that way (two ARTISTs).
/// Values are any UTF-8 text, the empty string included, as the format allows.
public struct StreamTags: Sendable, Equatable {
    public private(set) var entries: [(key: String, value: String)] = []

    public init() {}

    /// Adds `key=value`. Keys are ASCII 0x20–0x7D without '='; they are stored upper-case, as the
    /// Vorbis comment convention has it (field names compare case-insensitively). Returns false for
    /// an invalid key.
    @discardableResult
    public mutating func add(_ key: String, _ value: String) -> Bool {
        guard Self.isValidKey(key) else { return false }
        entries.append((key.uppercased(), value))
        return true
    }

    /// Whether some entry has `key` (compared case-insensitively, as Vorbis field names are).
    public func contains(key: String) -> Bool {
        let key = key.uppercased()
        return entries.contains { $0.key == key }
    }

    public static func isValidKey(_ key: String) -> Bool {
        invalidKeyCharacter(in: key) == nil && !key.isEmpty
    }

    /// The first character the Vorbis comment specification does not allow in a field name
    /// (outside ASCII 0x20–0x7D, or '='), or nil if there is none.
    public static func invalidKeyCharacter(in key: String) -> Unicode.Scalar? {
        key.unicodeScalars.first { $0.value < 0x20 || $0.value > 0x7D || $0 == "=" }
    }

    public static func == (lhs: StreamTags, rhs: StreamTags) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.key == $1.key && $0.value == $1.value }
    }
}
