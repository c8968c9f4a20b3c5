import AudioFormat
import Foundation
@testable import hark
import Recorder
import Testing

/// The level meter's figures on known signals, in every capture format, and how the status line
/// draws them.
@Suite struct LevelMeterTests {
    /// A sine of amplitude `amplitude` (full scale = 1) on the left, a full-scale square on the right.
    static func bytes(format: SampleFormat, frames: Int, amplitude: Double) -> [UInt8] {
        var bytes: [UInt8] = []
        for frame in 0..<frames {
            let sine = amplitude * sin(2 * Double.pi * 1000 * Double(frame) / 48_000)
            let square: Double = frame % 48 < 24 ? 1 : -1
            for value in [sine, square] {
                switch format {
                case .s16LE:
                    let sample = Int16(max(-32768, min(32767, (value * 32767).rounded())))
                    withUnsafeBytes(of: sample.littleEndian) { bytes += $0 }
                case .s24LE:
                    let sample = Int32(max(-8_388_608, min(8_388_607, (value * 8_388_607).rounded())))
                    withUnsafeBytes(of: sample.littleEndian) { bytes += $0 }
                case .s32LE:
                    let sample = value >= 1 ? Int32.max : value <= -1 ? Int32.min : Int32((value * 2_147_483_647).rounded())
                    withUnsafeBytes(of: sample.littleEndian) { bytes += $0 }
                case .floatLE:
                    withUnsafeBytes(of: Float(value).bitPattern.littleEndian) { bytes += $0 }
                }
            }
        }
        return bytes
    }

    @Test(arguments: SampleFormat.allCases)
    func aHalfScaleSineAndAFullScaleSquareMeasureAsTheyShould(format: SampleFormat) throws {
        let meter = LevelMeter(format: PCMFormat(sampleFormat: format, channels: 2, sampleRate: 48_000))
        let input = Self.bytes(format: format, frames: 4_800, amplitude: 0.5)
        input.withUnsafeBytes { meter.measure($0) }
        let window = try #require(meter.takeWindow())
        let sine = window.channels[0]
        let square = window.channels[1]
        #expect(abs(ChannelLevel.dBFS(sine.peak) - -6.02) < 0.05, "\(sine)")
        #expect(abs(ChannelLevel.dBFS(sine.rms) - -9.03) < 0.05, "\(sine)")
        #expect(ChannelLevel.dBFS(square.peak) > -0.01 && ChannelLevel.dBFS(square.rms) > -0.01, "\(square)")
        #expect(window.clippedSamples == 4_800, "every square sample is at full scale; the sine never is")
        #expect(meter.takeWindow() == nil, "taking a window starts the next one")
    }

    @Test func silenceIsMinusInfinity() throws {
        let meter = LevelMeter(format: PCMFormat(sampleFormat: .s16LE, channels: 1, sampleRate: 48_000))
        [UInt8](repeating: 0, count: 960).withUnsafeBytes { meter.measure($0) }
        let window = try #require(meter.takeWindow())
        #expect(ChannelLevel.dBFS(window.channels[0].peak) == -.infinity)
        #expect(StatusLine.decibels(-.infinity) == " -inf")
    }

    @Test func barsFiguresAndSizesReadRight() {
        #expect(StatusLine.bar(peak: -6, rms: -9, width: 12) == "██████████▒░")
        #expect(StatusLine.bar(peak: -.infinity, rms: -.infinity, width: 6) == "░░░░░░")
        #expect(StatusLine.bar(peak: 0, rms: 0, width: 6) == "██████")
        #expect(StatusLine.decibels(-6.02) == " -6.0")
        #expect(StatusLine.decibels(-45.66) == "-45.7")
        #expect(StatusLine.bytesText(812_345) == "812 kB")
        #expect(StatusLine.bytesText(2_314_000) == "2.31 MB")
        #expect(StatusLine.bytesText(1_020_000_000) == "1.02 GB")
    }

    @Test func theLineIsCutToTheTerminalWithoutBreakingEscapes() {
        let line = "\u{1B}[31m●\u{1B}[0m REC  default  0:00:01.2  12 kB"
        #expect(StatusLine.cut(line, toColumns: 80) == line)
        #expect(StatusLine.cut(line, toColumns: 8) == "\u{1B}[31m●\u{1B}[0m REC  ")
    }

    /// A wide character (CJK, emoji) takes two columns: a source named in Japanese wrapped the
    /// line on every redraw, as characters were counted, not columns.
    @Test func wideCharactersTakeTwoColumns() {
        let line = "● REC  日本語のマイク  0:00:01.2"
        #expect(StatusLine.cut(line, toColumns: 12) == "● REC  日本")  // 7 + 2 + 2 columns = 11 of the 11 usable
        #expect(StatusLine.cut(line, toColumns: 13) == "● REC  日本")  // a third wide one would need 13
        #expect(StatusLine.columns(of: "A") == 1 && StatusLine.columns(of: "●") == 1 && StatusLine.columns(of: "🎤") == 2)
    }

    /// No redrawn line on a dumb terminal; no colour under NO_COLOR (no-color.org: set, and not empty).
    @Test func aDumbTerminalGetsNoLineAndNoColorNoColour() {
        #expect(!StatusLine.canRedraw(term: "dumb") && StatusLine.canRedraw(term: "xterm-256color") && StatusLine.canRedraw(term: nil))
        #expect(!StatusLine.usesColour(noColor: "1") && StatusLine.usesColour(noColor: "") && StatusLine.usesColour(noColor: nil))
    }

    @Test func moreThanTwoChannelsGetNumberedShortBars() {
        let level = ChannelLevel(peak: 0.5, rms: 0.25)
        let text = StatusLine.meterText(LevelWindow(channels: Array(repeating: level, count: 4), clippedSamples: 0))
        #expect(text.hasPrefix("1 ") && text.contains("  4 ") && !text.contains("-6.0"), "\(text)")
    }
}
