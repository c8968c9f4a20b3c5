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
        guard bytes.count <= maxBytes else {
            throw JSONParseError(offset: maxBytes, reason: "document larger than \(maxBytes) bytes")
        }
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        self = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.failure("unexpected data after the document") }
    }
}

/// A recursive-descent parser over the document's bytes; one call per grammar rule of RFC 8259.
private struct JSONParser {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func failure(_ reason: String) -> JSONParseError { JSONParseError(offset: position, reason: reason) }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    /// `depth` counts the arrays and objects around the value.
    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw failure("unexpected end of the document") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard bytes.count - position >= expected.count, bytes[position..<position + expected.count].elementsEqual(expected) else {
            throw failure("invalid literal")
        }
        position += expected.count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= JSONValue.maxDepth else { throw failure("nested deeper than \(JSONValue.maxDepth) levels") }
        position += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") { position += 1; return .object(members) }
        while true {
            guard current == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let keyOffset = position
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            position += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            guard members.updateValue(value, forKey: key) == nil else {
                throw JSONParseError(offset: keyOffset, reason: "repeated key")
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1; skipWhitespace()
            case UInt8(ascii: "}"): position += 1; return .object(members)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= JSONValue.maxDepth else { throw failure("nested deeper than \(JSONValue.maxDepth) levels") }
        position += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { position += 1; return .array(elements) }
        while true {
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1; skipWhitespace()
            case UInt8(ascii: "]"): position += 1; return .array(elements)
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, checked here; the digits are then
    /// converted by the standard library, which rounds correctly.
    private mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        if current == UInt8(ascii: "0") {
            position += 1
            if isDigit(current) { throw failure("leading zero") }
        } else {
            guard skipDigits() else { throw failure("expected a digit") }
        }
        if current == UInt8(ascii: ".") {
            position += 1
            guard skipDigits() else { throw failure("expected a digit after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() else { throw failure("expected an exponent") }
        }
        guard let value = Double(String(decoding: bytes[start..<position], as: UTF8.self)), value.isFinite else {
            throw JSONParseError(offset: start, reason: "number out of range")
        }
        return value
    }

    /// Skips a run of digits; false when there was none.
    private mutating func skipDigits() -> Bool {
        let start = position
        while isDigit(current) { position += 1 }
        return position > start
    }

    private func isDigit(_ byte: UInt8?) -> Bool {
        guard let byte else { return false }
        return byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// A string literal, escapes decoded. The bytes between escapes are copied as they are and
    /// validated as UTF-8 once at the end.
    private mutating func parseString() throws(JSONParseError) -> String {
        let start = position
        position += 1  // "
        var utf8: [UInt8] = []
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw JSONParseError(offset: start, reason: "string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                try parseEscape(into: &utf8)
            case ..<0x20:
                throw failure("control character in a string")
            default:
                utf8.append(byte)
                position += 1
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONParseError) {
        guard let byte = current else { throw failure("unterminated string") }
        position += 1
        let simple: UInt8? = switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
        if let simple { utf8.append(simple); return }
        guard byte == UInt8(ascii: "u") else { throw failure("unknown escape") }
        var scalar = UInt32(try parseHexQuad())
        if (0xD800...0xDBFF).contains(scalar) {
            // A character outside the BMP comes as a UTF-16 pair: \uD83D\uDE00.
            guard bytes.count - position >= 2, bytes[position] == UInt8(ascii: "\\"),
                  bytes[position + 1] == UInt8(ascii: "u") else {
                throw failure("high surrogate without a low one")
            }
            position += 2
            let low = UInt32(try parseHexQuad())
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("high surrogate without a low one") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw failure("low surrogate without a high one")
        }
        UTF8.encode(Unicode.Scalar(scalar)!) { utf8.append($0) }
    }

    private mutating func parseHexQuad() throws(JSONParseError) -> UInt16 {
        guard bytes.count - position >= 4 else { throw failure("expected four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let digit: UInt8 = switch bytes[position] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): bytes[position] - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): bytes[position] - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): bytes[position] - UInt8(ascii: "A") + 10
            default: throw failure("expected four hex digits")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }
}
