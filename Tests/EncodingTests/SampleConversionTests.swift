import AudioFormat
import Encoding
import Testing

@Suite struct SampleConversionTests {
    private func convert(_ bytes: [UInt8], _ format: SampleFormat) -> [Int32] {
        let count = bytes.count / format.bytesPerSample
        var output = [Int32](repeating: 0, count: count)
        bytes.withUnsafeBytes { source in
            output.withUnsafeMutableBufferPointer { destination in
                SampleConversion.toInt32(source.baseAddress!, format: format, sampleCount: count, into: destination.baseAddress!)
            }
        }
        return output
    }

    @Test func s16IsWidenedWithItsSign() {
        #expect(convert([0xFF, 0x7F, 0x00, 0x80, 0xFF, 0xFF, 0x01, 0x00], .s16LE) == [32_767, -32_768, -1, 1])
    }

    @Test func s24IgnoresTheContainersTopByteAndSignExtendsBit23() {
        let bytes: [UInt8] = [0xFF, 0xFF, 0x7F, 0x00,  // +8388607
                              0x00, 0x00, 0x80, 0x00,  // -8388608, top byte not sign-extended by the device
                              0xFF, 0xFF, 0xFF, 0xAB,  // -1 with garbage in the top byte
                              0x01, 0x00, 0x00, 0xFF]  // +1 with garbage in the top byte
        #expect(convert(bytes, .s24LE) == [8_388_607, -8_388_608, -1, 1])
    }

    @Test func s32IsKeptWhole() {
        #expect(convert([0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x00, 0x80], .s32LE) == [Int32.max, Int32.min])
    }

    @Test func floatIsScaledTo24BitsAndClipped() {
        let values: [Float] = [0.5, -1, 1, 2, -3, .nan, 1.0 / 8_388_608]
        let bytes = values.flatMap { value in withUnsafeBytes(of: value.bitPattern.littleEndian) { Array($0) } }
        #expect(convert(bytes, .floatLE) == [4_194_304, -8_388_608, 8_388_607, 8_388_607, -8_388_608, 0, 1])
    }
}
