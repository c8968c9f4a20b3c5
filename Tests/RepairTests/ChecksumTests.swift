@testable import Repair
import Testing

@Suite struct ChecksumTests {
    @Test func md5MatchesRFC1321sTestSuite() {
        let cases: [(String, String)] = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"),
        ]
        for (text, expected) in cases {
            var md5 = MD5()
            // Fed in uneven pieces, so block boundaries fall inside updates.
            let bytes = Array(text.utf8)
            var index = 0
            var step = 1
            while index < bytes.count {
                md5.update(bytes[index..<min(bytes.count, index + step)])
                index += step
                step = step * 3 % 17 + 1
            }
            #expect(md5.digest().map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() == expected, "\(text)")
        }
    }

    @Test func flacCRC16OfAFrameWithItsCRCIsZero() {
        let frame: [UInt8] = [0xFF, 0xF8, 0x69, 0x08, 0x00, 0x17, 0x42, 0x00, 0x01, 0x02]
        let crc = Checksums.crc16(frame)
        #expect(Checksums.crc16(frame + [UInt8(crc >> 8), UInt8(crc & 0xFF)]) == 0)
    }
}
