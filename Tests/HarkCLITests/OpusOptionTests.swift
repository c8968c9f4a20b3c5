import AudioFormat
import Foundation
import Testing

/// The opusenc-style options of Ogg Opus output, each recorded by the built `hark` (3 s, unpaced,
/// through the file-plugin rig at 48 kHz) and checked three ways: opusinfo passes the file, opusdec
/// returns exactly the captured length, and the option's effect is visible in the stream itself.
@Suite struct OpusOptionTests {
    static let seconds = 3
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// A finished recording, read back with the tests' own Ogg and Opus parsing.
    struct Recording {
        let info: String
        let pages: [OggPage]
        let packets: [(bytes: [UInt8], page: Int)]
        let head: OpusHead?

        /// Every packet after OpusHead and OpusTags.
        var audioPackets: [[UInt8]] { packets.dropFirst(2).map(\.bytes) }
        /// The granule positions of the pages from OpusTags' (0) on, so each audio page's distance
        /// from the page before it is the audio that page added.
        var pageGranules: [Int64] { Array(pages.dropFirst().map(\.granulePosition)) }
        var largestGranuleStep: Int64 { zip(pageGranules, pageGranules.dropFirst()).map { $1 - $0 }.max() ?? 0 }
    }

    /// Records `seconds` of the test signal with `options`, expecting exit 0, a clean opusinfo and
    /// exactly the captured length from opusdec.
    static func record(_ options: [String], name: String = "take.opus",
                       sourceLocation: SourceLocation = #_sourceLocation) throws -> Recording {
        let frames = seconds * 48_000
        let rig = try ALSATestRig(input: TestSignal(format: format, frames: frames).alsaBytes)
        let output = rig.path(name)
        let result = try runHark(["record", "-q", "-D", "filecap", "-d", "\(seconds)", "-o", output] + options, rig: rig)
        #expect(result.status == 0, "\(options): \(result.standardError)", sourceLocation: sourceLocation)
        let info = try OpusTools.info(output)
        #expect(info.isClean, "\(options): \(info.text)", sourceLocation: sourceLocation)
        let decoded = try OpusTools.decode(output)
        #expect(decoded.channels == 2 && decoded.samples.count / 2 == frames,
                "\(options): \(decoded.samples.count / 2) frames decoded", sourceLocation: sourceLocation)
        let pages = OggPage.pages(of: try Data(contentsOf: URL(fileURLWithPath: output)))
        let packets = OggPage.packets(of: pages)
        return Recording(info: info.text, pages: pages, packets: packets, head: packets.first.flatMap { OpusHead($0.bytes) })
    }

    struct FrameSize: Sendable, CustomTestStringConvertible {
        let option: String
        let samples: Int
        var testDescription: String { "--frame-size \(option)" }
    }

    @Test(arguments: [FrameSize(option: "2.5", samples: 120), FrameSize(option: "5", samples: 240),
                      FrameSize(option: "10", samples: 480), FrameSize(option: "40", samples: 1920),
                      FrameSize(option: "60", samples: 2880)])
    func frameSizeSetsEveryPacketsDuration(_ frameSize: FrameSize) throws {
        let recording = try Self.record(["--frame-size", frameSize.option])
        let tocs = recording.audioPackets.compactMap(OpusTOC.init)
        #expect(tocs.count == recording.audioPackets.count)
        // Every packet but the last lasts the frame size. The last, written when libopusenc drains,
        // may be shorter (a 20 ms packet ends 40 and 60 ms streams here, as it does with opusenc).
        let durations = Set(tocs.dropLast().map(\.samples))
        #expect(durations == [frameSize.samples], "packet durations in 48 kHz samples: \(durations)")
        #expect(tocs.last.map { $0.samples <= frameSize.samples } == true)
        // opusinfo agrees: "Packet duration:    2.5ms (max),    2.5ms (avg),    2.5ms (min)".
        let milliseconds = String(format: "%.1fms", Double(frameSize.samples) / 48)
        let durationLine = recording.info.split(separator: "\n").first { $0.contains("Packet duration:") } ?? ""
        #expect(durationLine.contains("\(milliseconds) (max)"), "\(recording.info)")
        if frameSize.option == "2.5" {
            // What libopus 1.3.1 emits at the default 96 kb/s: CELT-only fullband 2.5 ms (config
            // 28), one frame a packet; TOC 0xE4 with the stereo bit.
            #expect(Set(tocs.map(\.configuration)) == [28] && tocs.allSatisfy { $0.frameCount == 1 && $0.isStereo })
        }
        if frameSize.option == "60" {
            // CELT has no 60 ms frame: libopus packs three 20 ms ones (code 3, config 31).
            #expect(tocs.dropLast().allSatisfy { $0.configuration == 31 && $0.frameCount == 3 })
        }
    }

    @Test func hardCBRGivesEveryPacketTheSameLengthAndCVBRIsAccepted() throws {
        let vbr = try Self.record([])
        let hardCBR = try Self.record(["--hard-cbr"])
        let constrained = try Self.record(["--cvbr"])
        let lengths = Set(hardCBR.audioPackets.map(\.count))
        #expect(lengths.count == 1, "hard CBR packet lengths: \(lengths.sorted())")
        #expect(hardCBR.info.contains("(hard-CBR)"), "\(hardCBR.info)")
        // The control: the default (VBR) varies its packets, as does constrained VBR.
        #expect(Set(vbr.audioPackets.map(\.count)).count > 10 && !vbr.info.contains("(hard-CBR)"))
        #expect(Set(constrained.audioPackets.map(\.count)).count > 1 && !constrained.info.contains("(hard-CBR)"))
        // Constrained VBR holds the average to the target, which this signal's unconstrained VBR
        // overshoots (opusenc --bitrate 96 on it: 129 kb/s of audio; --cvbr 97 here).
        let bytes = { (recording: Recording) in recording.audioPackets.reduce(0) { $0 + $1.count } }
        #expect(Double(bytes(constrained)) <= 1.1 * Double(bytes(hardCBR)) && bytes(constrained) < bytes(vbr),
                "audio bytes: cvbr \(bytes(constrained)), hard CBR \(bytes(hardCBR)), vbr \(bytes(vbr))")
    }

    @Test func complexityZeroIsCleanAndExact() throws {
        let fastest = try Self.record(["--complexity", "0"])
        let best = try Self.record([])
        #expect(fastest.audioPackets.count == best.audioPackets.count)
        #expect(fastest.audioPackets.map(\.count) != best.audioPackets.map(\.count), "a different encoding")
    }

    @Test func lowdelayHasASmallerPreSkipAndVoipIsClean() throws {
        let audio = try #require(try Self.record([]).head)
        let lowdelay = try #require(try Self.record(["--application", "lowdelay"]).head)
        let voip = try #require(try Self.record(["--application", "voip"]).head)
        // libopus 1.3.1: 312 for audio and voip (2.5 ms of CELT lookahead plus 4 ms of delay
        // compensation), 120 for restricted low delay (the CELT lookahead alone).
        #expect(lowdelay.preSkip < audio.preSkip, "pre-skip: lowdelay \(lowdelay.preSkip), audio \(audio.preSkip)")
        #expect(voip.channels == 2 && voip.preSkip > 0)
    }

    @Test func maxDelayBoundsTheAudioEachPageHolds() throws {
        var largestSteps: [Int: Int64] = [:]
        for maxDelay in [0, 200, 1000] {
            let recording = try Self.record(maxDelay == 200 ? [] : ["--max-delay", "\(maxDelay)"])
            let step = recording.largestGranuleStep
            // A page is flushed once it holds `--max-delay` of audio (0: every 20 ms packet alone).
            #expect(step <= Int64(maxDelay * 48 + 960), "--max-delay \(maxDelay): a page adds \(step) samples")
            if maxDelay == 0 {
                #expect(recording.pages.dropFirst(2).allSatisfy { $0.lacingValues.filter { $0 < 255 }.count == 1 },
                        "one packet a page")
            }
            largestSteps[maxDelay] = step
        }
        #expect(largestSteps[0]! < largestSteps[200]! && largestSteps[200]! < largestSteps[1000]!, "\(largestSteps)")
        #expect(largestSteps[1000]! >= 40 * 960, "\(largestSteps)")
    }

    @Test func anOggExtensionGivesOggOpus() throws {
        let recording = try Self.record([], name: "take.ogg")
        #expect(recording.head?.channels == 2 && recording.head?.inputSampleRate == 48_000)
        #expect(recording.packets.count > 2 && recording.packets[1].bytes.starts(with: "OpusTags".utf8))
    }
}
