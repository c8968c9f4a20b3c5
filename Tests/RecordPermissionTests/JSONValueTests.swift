import Foundation
import SignalGenerator
import Testing
@testable import RecordPermission

/// The gate's JSON parser and serializer: strict RFC 8259 in, `JSONEncoder`'s exact bytes out.
@Suite struct JSONValueTests {
    private func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try JSONValue(parsing: Array(text.utf8))
    }

    @Test func parsesEveryKindOfValue() throws {
        let value = try parse(#" { "a" : [1, -2.5, 3e2, 0, -0, 1E-2], "b": {"c": null, "d": true, "e": false}, "f": "x" } "#)
        #expect(value == .object([
            "a": .array([.number(1), .number(-2.5), .number(300), .number(0), .number(0), .number(0.01)]),
            "b": .object(["c": .null, "d": .bool(true), "e": .bool(false)]),
            "f": .string("x"),
        ]))
        #expect(try parse("[]") == .array([]) && parse("{}") == .object([:]) && parse("\"\"") == .string(""))
        #expect(try parse("\t\r\n 42 \n") == .number(42), "whitespace around the document")
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try parse(#""\u0041\u00e9\u00E9\u20AC\u0000""#) == .string("Aéé€\u{0}"))
        #expect(try parse(#""\ud83d\ude00 and \uD834\uDD1E""#) == .string("😀 and 𝄞"))
        #expect(try parse("\"é😀\u{2028}\"") == .string("é😀\u{2028}"), "raw UTF-8, U+2028 included")
    }

    static let invalidDocuments: [String] = [
        "", " ", "nul", "True", "NaN", "Infinity", "-", "+1", "01", "-01", "1.", ".5", "1e", "1e+", "0x10", "1e999", "-1e999",
        "[1,]", "[,1]", "[1 2]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{'a':1}", "{\"a\":1 \"b\":2}", "{1:2}",
        "{\"a\":1}x", "{\"a\":1}}", "[1]]", "1 2", "[", "{", "\"abc", "\"\\\"",
        "\"\\x41\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\U0041\"", "\"\\'\"",
        "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800x\"", "\"\\udbff\\udbff\"",
        "\"tab\there\"", "\"new\nline\"", "\"nul\u{0}\"", "\"\u{1F}\"",
        "{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":{},\"a\":1}",
        "\u{FEFF}{}", "// comment\n{}", "[1,/*x*/2]", "[true false]",
    ]

    @Test(arguments: invalidDocuments)
    func rejects(_ text: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xC0, 0xAF, 0x22],
                               [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0xFF]] {
            #expect(throws: JSONParseError.self, "\(bytes)") { try JSONValue(parsing: bytes) }
        }
    }

    @Test func nestingIsLimited() throws {
        let deepest = String(repeating: "[", count: JSONValue.maxDepth) + String(repeating: "]", count: JSONValue.maxDepth)
        #expect(try parse(deepest).arrayValue != nil)
        let tooDeep = "[" + deepest + "]"
        #expect(throws: JSONParseError.self) { try parse(tooDeep) }
        let objects = String(repeating: "{\"a\":", count: JSONValue.maxDepth + 1) + "1" + String(repeating: "}", count: JSONValue.maxDepth + 1)
        #expect(throws: JSONParseError.self) { try parse(objects) }
        // A hostile file of brackets stops at the limit rather than exhausting the stack.
        #expect(throws: JSONParseError.self) { try parse(String(repeating: "[", count: 500_000)) }
    }

    @Test func sizeIsLimited() throws {
        let text = Array("[\"\(String(repeating: "x", count: 100))\"]".utf8)
        #expect(try JSONValue(parsing: text, maxBytes: text.count).arrayValue?.count == 1)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text, maxBytes: text.count - 1) }
    }

    @Test func exactIntReadsWholeNumbersOnly() throws {
        #expect(try parse("48000").exactInt == 48_000 && parse("48000.0").exactInt == 48_000 && parse("4.8e4").exactInt == 48_000)
        #expect(try parse("-0").exactInt == 0 && parse("-7").exactInt == -7)
        #expect(try parse("9007199254740992").exactInt == 9_007_199_254_740_992)
        #expect(try parse("9007199254740994").exactInt == nil, "beyond 2^53 a Double is no longer exact")
        #expect(try parse("1.5").exactInt == nil && parse("1e300").exactInt == nil && parse("\"1\"").exactInt == nil)
    }

    @Test func keysAreWrittenInByteOrderWhateverTheInsertionOrder() {
        let keys = ["b", "é", "a9", "B", "_", "a10", "Z", "a"]
        var forward: [String: JSONValue] = [:], backward: [String: JSONValue] = [:]
        for (index, key) in keys.enumerated() { forward[key] = .number(Double(index)) }
        for (index, key) in keys.enumerated().reversed() { backward[key] = .number(Double(index)) }
        let text = String(decoding: JSONValue.object(forward).serialized(.compactLine), as: UTF8.self)
        #expect(text == #"{"B":3,"Z":6,"_":4,"a":7,"a10":5,"a9":2,"b":0,"é":1}"#)
        #expect(JSONValue.object(backward).serialized(.compactLine) == JSONValue.object(forward).serialized(.compactLine))
    }

    @Test func randomDocumentsRoundTripInBothLayouts() throws {
        var random = SplitMix64(seed: 0x4A53_4F4E)
        for _ in 0..<500 {
            let value = randomValue(&random, depth: 0)
            for layout in [JSONValue.Layout.indented, .compactLine] {
                let bytes = value.serialized(layout)
                #expect(try JSONValue(parsing: bytes) == value, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    /// The serializer is checked against the encoder whose files it must reproduce.
    @Test func layoutsMatchFoundationsJSONEncoder() throws {
        struct Sample: Encodable {
            var text = "a/b \"q\" \\ \u{0}\u{1}\u{8}\t\n\u{C}\r\u{1F}\u{7F} é 😀 \u{2028}"
            var counts = ["zebra": 1, "Apple": -2, "apple": 3, "a10": 4, "a9": 5]
            var empty: [Int] = []
            var emptyObject: [String: Int] = [:]
            var nested = [[1, 2], [], [3]]
            var flag = true
            var large = 9_007_199_254_740_992
            var fraction = 0.25
        }
        let value: JSONValue = .object([
            "text": .string(Sample().text),
            "counts": .object(["zebra": .number(1), "Apple": .number(-2), "apple": .number(3), "a10": .number(4), "a9": .number(5)]),
            "empty": .array([]), "emptyObject": .object([:]),
            "nested": .array([.array([.number(1), .number(2)]), .array([]), .array([.number(3)])]),
            "flag": .bool(true), "large": .number(9_007_199_254_740_992), "fraction": .number(0.25),
        ])
        let store = JSONEncoder()
        store.outputFormatting = [.sortedKeys, .prettyPrinted]
        let log = JSONEncoder()
        log.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(value.serialized(.indented) == Array(try store.encode(Sample())))
        #expect(value.serialized(.compactLine) == Array(try log.encode(Sample())))
    }

    /// `members(_:of:)` builds only the members asked for, yet must accept and reject exactly what
    /// `init(parsing:)` does, with the same error: checked on the documents above, random ones, and
    /// seeded mutations of access log lines (bytes deleted, inserted and replaced), each also as a
    /// line in the middle of a file.
    @Test func membersAcceptAndRejectExactlyWhatTheParserDoes() throws {
        let keys = ["event", "id", "segment", "output"]
        func check(_ bytes: [UInt8]) {
            let whole = Result { () throws(JSONParseError) in try JSONValue(parsing: bytes) }
            let skimmed = Result { () throws(JSONParseError) in try JSONValue.members(keys, of: bytes[...]) }
            switch (whole, skimmed) {
            case (.success(let value), .success(let members)):
                #expect(members == keys.map { value[$0] }, "\(String(decoding: bytes, as: UTF8.self))")
            case (.failure(let wholeError), .failure(let skimError)):
                #expect(wholeError == skimError, "\(String(decoding: bytes, as: UTF8.self))")
            default:
                Issue.record("parsed \(whole), skimmed \(skimmed): \(String(decoding: bytes, as: UTF8.self))")
            }
            // A line in the middle of a file read whole: the same, errors counted from its start.
            let file: [UInt8] = Array("{}\n".utf8) + bytes + [0x0A]
            let line = file[3..<file.count - 1]
            #expect(Result { () throws(JSONParseError) in try JSONValue(parsing: line) } == whole)
            #expect(Result { () throws(JSONParseError) in try JSONValue.members(keys, of: line) } == skimmed)
        }
        for text in Self.invalidDocuments { check(Array(text.utf8)) }
        var random = SplitMix64(seed: 0x5EED_0F_10E5)
        for _ in 0..<300 {
            let value = randomValue(&random, depth: 0)
            check(value.serialized(.compactLine))
            check(JSONValue.object(["id": .string(randomString(&random)), "x": value, "event": value]).serialized(.compactLine))
        }
        let lines = [
            #"{"boot":"b","event":"started","id":"1f-2e","output":"/r/caf\u00e9 \"x\".flac","pid":42,"processStart":7,"start":"2026-11-01T10:00:00Z"}"#,
            #"{"app":"a","clockDriftPPM":-1.5,"consent":"stored","end":"2026-11-01T10:01:00Z","frames":48000,"id":"1f-2e","loudnessLUFS":-23.04,"segment":null,"start":"2026-11-01T10:00:00Z"}"#,
            #"{"event":"file","id":"1f","nested":{"a":[1,{"b":[]}],"c":"d"},"output":"/r/é-2.flac","time":"t"}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[]":,\u0e.-+1 tfn"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xE2, 0xED, 0xF4, 0xFF]
        for _ in 0..<3_000 {
            var bytes = lines[random.next(below: lines.count)]
            for _ in 0...random.next(below: 3) {
                let at = random.next(below: bytes.count)
                switch random.next(below: 3) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(alphabet[random.next(below: alphabet.count)], at: at)
                default: bytes[at] = alphabet[random.next(below: alphabet.count)]
                }
                if bytes.isEmpty { break }
            }
            check(bytes)
        }
    }

    private func randomValue(_ random: inout SplitMix64, depth: Int) -> JSONValue {
        switch random.next(below: depth > 4 ? 4 : 6) {
        case 0: return .null
        case 1: return .bool(random.next(below: 2) == 0)
        case 2:
            let numbers: [Double] = [0, 1, -1, 0.5, -2.25, 1e-7, 6.02e23, 9_007_199_254_740_992, 123_456_789, 1e300]
            return .number(numbers[random.next(below: numbers.count)])
        case 3: return .string(randomString(&random))
        case 4: return .array((0..<random.next(below: 4)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<random.next(below: 4) { members[randomString(&random)] = randomValue(&random, depth: depth + 1) }
            return .object(members)
        }
    }

    private func randomString(_ random: inout SplitMix64) -> String {
        let pieces = ["a", "Z", "/", "\\", "\"", "\u{0}", "\n", "\u{1F}", "é", "😀", "\u{2028}", " ", "{", "]"]
        return (0..<random.next(below: 6)).map { _ in pieces[random.next(below: pieces.count)] }.joined()
    }
}
