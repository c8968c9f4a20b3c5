/// A JSON document as a value: what the store, the access log and the administrator's policy are
/// written in.
///
/// The gate reads and writes these files itself rather than through Foundation's `JSONDecoder` and
/// `JSONEncoder`, so a recording runs no Foundation code and its pages stay off the resident set.
/// Measured on 2026-11-22, release build, 15 runs each of `/usr/bin/time -f %M hark record -q -D
/// filecap -d 10 -o x.flac` (and `-o x.opus`) with a granted store: median peak RSS 15,140 KB (FLAC)
/// and 16,092 KB (Opus 128k) with this type and `WallClockTime`; 16,824 KB and 17,840 KB when the
/// store, the policy and the access log go through `JSONDecoder`/`JSONEncoder` with `Date`. That is
/// 1.6–1.7 MiB, and both formats over the 16 MiB target without it. (Size is no argument either
/// way: `ArgumentParser` links Foundation's JSON coders in regardless; stripped, the Foundation
/// variant was 12 KB smaller.)
///
/// The parser is strict RFC 8259, because whatever it accepts can decide consent: anything it does
/// not understand fails, and a caller that fails never grants. `StoreFuzzTests` feeds it 3,000
/// seeded mutated store files in every `scripts/test` run (plain and under AddressSanitizer), and
/// `scripts/fuzz-store` a million: none may grant or crash. `JSONValueTests` covers the documents it
/// must reject, random round trips and byte parity with `JSONEncoder`.
///
/// Numbers are kept as `Double`, as JavaScript keeps them; `exactInt` reads the integers the files
/// hold (format versions, frame counts) exactly up to 2^53.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Keys are unique: the parser rejects a document that repeats one.
    case object([String: JSONValue])

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }

    var boolValue: Bool? {
        if case .bool(let flag) = self { flag } else { nil }
    }

    var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { members } else { nil }
    }

    /// The number as an `Int` when it is a whole number a `Double` holds exactly (|n| ≤ 2^53), so
    /// `48000`, `48000.0` and `4.8e4` all read as 48000 (as `JSONDecoder` read them) and `1.5` or
    /// `1e300` read as nil.
    var exactInt: Int? {
        guard case .number(let value) = self, value.rounded(.towardZero) == value,
              value.magnitude <= Self.largestExactInteger else { return nil }
        return Int(value)
    }

    static let largestExactInteger: Double = 9_007_199_254_740_992  // 2^53
}

// MARK: Serializing

extension JSONValue {
    /// How a document is laid out. The two layouts reproduce, byte for byte, what Foundation's
    /// `JSONEncoder` wrote with the options each file used, so files stay interchangeable with
    /// earlier versions of the gate.
    public struct Layout: Sendable {
        /// One member per line, two-space indents, `"key" : value`, and `/` written as `\/`
        /// (`JSONEncoder`'s `[.prettyPrinted, .sortedKeys]`): the store.
        public static let indented = Layout(isIndented: true, escapesSlashes: true)
        /// One line, no spaces (`[.sortedKeys, .withoutEscapingSlashes]`): an access-log line.
        public static let compactLine = Layout(isIndented: false, escapesSlashes: false)

        let isIndented: Bool
        let escapesSlashes: Bool
    }

    /// The document as UTF-8 bytes, object keys sorted by their UTF-8 bytes so equal values always
    /// serialize alike. Numbers must be finite (JSON has no NaN or infinity); whole numbers within
    /// ±2^53 are written without a fraction, as `JSONEncoder` wrote an `Int`.
    public func serialized(_ layout: Layout) -> [UInt8] {
        var output: [UInt8] = []
        write(into: &output, layout: layout, depth: 0)
        return output
    }

    private func write(into output: inout [UInt8], layout: Layout, depth: Int) {
        switch self {
        case .null: output += Array("null".utf8)
        case .bool(let flag): output += Array((flag ? "true" : "false").utf8)
        case .number(let value): output += Array(Self.numberText(value).utf8)
        case .string(let text): Self.writeString(text, into: &output, layout: layout)
        case .array(let elements):
            writeContainer(open: UInt8(ascii: "["), close: UInt8(ascii: "]"), count: elements.count,
                           into: &output, layout: layout, depth: depth) { index, output in
                elements[index].write(into: &output, layout: layout, depth: depth + 1)
            }
        case .object(let members):
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            writeContainer(open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), count: keys.count,
                           into: &output, layout: layout, depth: depth) { index, output in
                Self.writeString(keys[index], into: &output, layout: layout)
                output += layout.isIndented ? Array(" : ".utf8) : [UInt8(ascii: ":")]
                members[keys[index]]!.write(into: &output, layout: layout, depth: depth + 1)
            }
        }
    }

    /// Brackets around `count` elements. Indented, an empty container still spans an empty line
    /// (`[\n\n  ]`), as `JSONEncoder` wrote it.
    private func writeContainer(open: UInt8, close: UInt8, count: Int, into output: inout [UInt8], layout: Layout,
                                depth: Int, element: (Int, inout [UInt8]) -> Void) {
        output.append(open)
        let indent = { (level: Int) -> [UInt8] in [UInt8](repeating: UInt8(ascii: " "), count: 2 * level) }
        if layout.isIndented && count == 0 { output += [0x0A, 0x0A] + indent(depth) }
        for index in 0..<count {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            if layout.isIndented { output += [0x0A] + indent(depth + 1) }
            element(index, &output)
        }
        if layout.isIndented && count > 0 { output += [0x0A] + indent(depth) }
        output.append(close)
    }

    private static func numberText(_ value: Double) -> String {
        precondition(value.isFinite, "JSON has no NaN or infinity")
        if value.rounded(.towardZero) == value && value.magnitude <= largestExactInteger { return String(Int(value)) }
        return String(value)  // shortest round-tripping form, e.g. 1.5 or 1e+300: valid JSON
    }

    /// Escapes `"`, `\`, control characters (short forms where JSON has them, `\u00xx` otherwise)
    /// and, when the layout says so, `/`. Everything else, non-ASCII included, stays as UTF-8.
    private static func writeString(_ text: String, into output: inout [UInt8], layout: Layout) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output += Array(#"\""#.utf8)
            case UInt8(ascii: "\\"): output += Array(#"\\"#.utf8)
            case UInt8(ascii: "/") where layout.escapesSlashes: output += Array(#"\/"#.utf8)
            case 0x08: output += Array(#"\b"#.utf8)
            case 0x09: output += Array(#"\t"#.utf8)
            case 0x0A: output += Array(#"\n"#.utf8)
            case 0x0C: output += Array(#"\f"#.utf8)
            case 0x0D: output += Array(#"\r"#.utf8)
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

// MARK: Parsing

/// Why a document was rejected, and the byte offset where the parser stopped.
struct JSONParseError: Error, Equatable, CustomStringConvertible {
    let offset: Int
    let reason: String

    var description: String { "\(reason) at byte \(offset)" }
}

extension JSONValue {
    /// Nesting deeper than this is rejected: no file of ours nests more than three levels, and the
    /// parser recurses once per level, so a hostile `[[[[…` cannot exhaust the stack.
    static let maxDepth = 64
    /// The largest document `init(parsing:)` accepts unless told otherwise. The files have their own,
    /// smaller limits (`PermissionStore.maxBytes`); this one bounds work for any other caller.
    static let defaultMaxBytes = 1 << 20

    /// Parses one complete RFC 8259 document of UTF-8 `bytes`. Rejected: anything after the value
    /// but whitespace, a byte-order mark, invalid UTF-8, unescaped control characters, unknown
    /// escapes, unpaired UTF-16 surrogates in `\u` escapes, leading zeros, numbers a `Double`
    /// cannot hold, a key repeated in one object (parsers disagree on which copy wins, so a file
    /// could mean one thing to an editor and another to the gate), nesting deeper than `maxDepth`,
    /// and more than `maxBytes` bytes.
    init(parsing bytes: [UInt8], maxBytes: Int = JSONValue.defaultMaxBytes) throws(JSONParseError) {
        try self.init(parsing: bytes[...], maxBytes: maxBytes)
    }

    /// The same for part of an array (a line of a file read whole); errors count from its first byte.
    init(parsing bytes: ArraySlice<UInt8>, maxBytes: Int = JSONValue.defaultMaxBytes) throws(JSONParseError) {
        self = try JSONParser.wholeDocument(bytes, maxBytes: maxBytes) { parser throws(JSONParseError) in
            try parser.parseValue(depth: 0)
        }
    }

    /// The members named `keys` of the object `bytes` hold, in the order of `keys` (nil for each
    /// the object lacks, and for all when the document is not an object), without building the
    /// others: a key or two of each of a log's thousands of lines costs a scan, not a dictionary
    /// per line. Accepts and rejects exactly the documents `init(parsing:)` does, with the same
    /// error, so a line means the same to both.
    static func members(_ keys: [String], of bytes: ArraySlice<UInt8>, maxBytes: Int = JSONValue.defaultMaxBytes) throws(JSONParseError) -> [JSONValue?] {
        try JSONParser.wholeDocument(bytes, maxBytes: maxBytes) { parser throws(JSONParseError) in
            var kept = [JSONValue?](repeating: nil, count: keys.count)
            try parser.skimValue(wanted: keys, kept: &kept)
            return kept
        }
    }
}
