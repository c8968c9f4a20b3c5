/// A recursive-descent parser over the document's bytes; one call per grammar rule of RFC 8259.
struct JSONParser {
    /// The document: a whole array, or one line of a file read whole (no copy).
    let bytes: ArraySlice<UInt8>
    /// An index of `bytes`; errors give it from the document's first byte.
    var position: Int

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    /// Reads `bytes` as one whole document with `value`, which parses or skims the value itself:
    /// the size is checked first, whitespace is allowed around the value, and nothing after it.
    static func wholeDocument<Value>(_ bytes: ArraySlice<UInt8>, maxBytes: Int,
                                     _ value: (inout JSONParser) throws(JSONParseError) -> Value) throws(JSONParseError) -> Value {
        guard bytes.count <= maxBytes else {
            throw JSONParseError(offset: maxBytes, reason: "document larger than \(maxBytes) bytes")
        }
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let result = try value(&parser)
        parser.skipWhitespace()
        guard parser.position == bytes.endIndex else { throw parser.failure("unexpected data after the document") }
        return result
    }

    func failure(_ reason: String) -> JSONParseError { failure(reason, at: position) }

    func failure(_ reason: String, at index: Int) -> JSONParseError {
        JSONParseError(offset: index - bytes.startIndex, reason: reason)
    }

    private var current: UInt8? { position < bytes.endIndex ? bytes[position] : nil }

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
        guard bytes.endIndex - position >= expected.count, bytes[position..<position + expected.count].elementsEqual(expected) else {
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
            let (key, keyOffset) = try parseMemberKey()
            let value = try parseValue(depth: depth)
            guard members.updateValue(value, forKey: key) == nil else {
                throw failure("repeated key", at: keyOffset)
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1; skipWhitespace()
            case UInt8(ascii: "}"): position += 1; return .object(members)
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    /// A member's key and the ':' after it, leaving `position` at its value. The key's offset is
    /// where a "repeated key" error points.
    private mutating func parseMemberKey() throws(JSONParseError) -> (key: String, offset: Int) {
        guard current == UInt8(ascii: "\"") else { throw failure("expected a key") }
        let offset = position
        let key = try parseString()
        skipWhitespace()
        guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
        position += 1
        skipWhitespace()
        return (key, offset)
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
            throw failure("number out of range", at: start)
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
        // Most strings of our files are plain ASCII without escapes: taken whole, they need no
        // copy and no UTF-8 check. At anything else the loop below goes on from where this stopped.
        let plain = position
        skipPlainCharacters()
        if current == UInt8(ascii: "\"") {
            position += 1
            return String(decoding: bytes[plain..<position - 1], as: UTF8.self)
        }
        var utf8 = Array(bytes[plain..<position])
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw failure("string is not valid UTF-8", at: start)
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

    /// Moves past printable ASCII other than a quote or a backslash.
    private mutating func skipPlainCharacters() {
        while let byte = current, byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            position += 1
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
            guard bytes.endIndex - position >= 2, bytes[position] == UInt8(ascii: "\\"),
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
        guard bytes.endIndex - position >= 4 else { throw failure("expected four hex digits") }
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

// MARK: Skimming: the same grammar, building only what is asked for

extension JSONParser {
    /// Checks the value at `position` as `parseValue` would, throwing the same error where that
    /// throws, and builds only the members named in `wanted` of a top-level object (`kept[i]`
    /// for `wanted[i]`, left nil when absent). Everything else is checked and passed over; only
    /// object keys are built, to find a repeated one.
    mutating func skimValue(wanted: [String], kept: inout [JSONValue?]) throws(JSONParseError) {
        if current == UInt8(ascii: "{") {
            try skimObject(depth: 1, wanted: wanted, kept: &kept)
        } else {
            try skipValue(depth: 0)
        }
    }

    private mutating func skipValue(depth: Int) throws(JSONParseError) {
        guard let byte = current else { throw failure("unexpected end of the document") }
        switch byte {
        case UInt8(ascii: "{"):
            var nothing: [JSONValue?] = []
            try skimObject(depth: depth + 1, wanted: [], kept: &nothing)
        case UInt8(ascii: "["): try skipArray(depth: depth + 1)
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    /// `parseObject`'s checks in `parseObject`'s order: a repeated key is found after its value.
    private mutating func skimObject(depth: Int, wanted: [String], kept: inout [JSONValue?]) throws(JSONParseError) {
        guard depth <= JSONValue.maxDepth else { throw failure("nested deeper than \(JSONValue.maxDepth) levels") }
        position += 1  // {
        skipWhitespace()
        if current == UInt8(ascii: "}") { position += 1; return }
        var keys: [String] = []
        keys.reserveCapacity(16)
        while true {
            let (key, keyOffset) = try parseMemberKey()
            if let index = wanted.firstIndex(of: key) {
                kept[index] = try parseValue(depth: depth)
            } else {
                try skipValue(depth: depth)
            }
            guard !keys.contains(key) else { throw failure("repeated key", at: keyOffset) }
            keys.append(key)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1; skipWhitespace()
            case UInt8(ascii: "}"): position += 1; return
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    private mutating func skipArray(depth: Int) throws(JSONParseError) {
        guard depth <= JSONValue.maxDepth else { throw failure("nested deeper than \(JSONValue.maxDepth) levels") }
        position += 1  // [
        skipWhitespace()
        if current == UInt8(ascii: "]") { position += 1; return }
        while true {
            try skipValue(depth: depth)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1; skipWhitespace()
            case UInt8(ascii: "]"): position += 1; return
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    /// A plain string is passed over; one with an escape or a byte outside ASCII is decoded by
    /// `parseString` (rare in our files), which checks it.
    private mutating func skipString() throws(JSONParseError) {
        let start = position
        position += 1  // "
        skipPlainCharacters()
        if current == UInt8(ascii: "\"") {
            position += 1
            return
        }
        position = start
        _ = try parseString()
    }
}
