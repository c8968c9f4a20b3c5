extension String {
    /// The text as it may be shown to a person on a terminal: each control character (C0 but
    /// none, DEL, C1) written as an escape (`\n`, `\t`, `\r`, else `\xNN` or `\u{NN}`), and a
    /// backslash doubled so the escapes cannot be faked. What the access log holds comes from
    /// file names and device descriptions (a Bluetooth device names itself); shown as it is, a
    /// newline in one made a whole fake entry in `hark permissions log`, and an escape sequence
    /// could rewrite the terminal.
    var shownOnTerminal: String {
        var shown = ""
        for scalar in unicodeScalars {
            switch scalar.value {
            case 0x5C: shown += "\\\\"
            case 0x0A: shown += "\\n"
            case 0x09: shown += "\\t"
            case 0x0D: shown += "\\r"
            case 0x00..<0x20, 0x7F: shown += "\\x" + String(scalar.value, radix: 16).leftPadded(to: 2)
            case 0x80..<0xA0: shown += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }
}

extension String {
    /// The digits with zeros in front, to `width` characters.
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
