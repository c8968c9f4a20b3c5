/// Vorbis comments (`KEY=VALUE`) written into FLAC's VORBIS_COMMENT block and Ogg Opus's OpusTags.
public struct StreamTags: Sendable, Equatable {
    public private(set) var entries: [(key: String, value: String)] = []

    public init() {}

    /// Adds `key=value`. Keys are ASCII 0x20–0x7D without '='; they are stored upper-case, as the
    /// Vorbis comment convention has it. Returns false for an invalid key.
    @discardableResult
    public mutating func add(_ key: String, _ value: String) -> Bool {
        guard Self.isValidKey(key) else { return false }
        entries.append((key.uppercased(), value))
        return true
    }

    public static func isValidKey(_ key: String) -> Bool {
        !key.isEmpty && key.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value <= 0x7D && $0 != "=" }
    }

    public static func == (lhs: StreamTags, rhs: StreamTags) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.key == $1.key && $0.value == $1.value }
    }
}
