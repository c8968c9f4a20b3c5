import AudioFormat
import Foundation
import Testing

/// A sound-server "microphone" fed from a FIFO at real-time pace (module-pipe-source), so what
/// hark recorded from the server can be compared with what went in, sample for sample.
enum PipeMicrophone {
    /// A rig whose PulseAudio (or, with `onPipeWire`, PipeWire through pipewire-pulse) has a
    /// FIFO-fed microphone `studiopipe` ("Studio Pipe Microphone") of `signal`'s format with
    /// `channelMap` (pactl's names), and a feeder writing `signal` to it. Keep both alive while
    /// hark records. `alsaConfiguration` is added to the rig's ALSA configuration.
    static func start(_ signal: TestSignal, channelMap: String, onPipeWire: Bool = false, alsaConfiguration: String = "") throws
        -> (rig: ALSATestRig, feeder: PipeSourceFeeder) {
        let rig = try ALSATestRig(input: Data(), extraConfiguration: alsaConfiguration)
        if onPipeWire { try rig.startPipeWireDesktop() } else { try rig.startPulseAudio() }
        let fifo = rig.path("studio.fifo")
        let format = signal.format
        let loaded = try runTool("pactl", ["load-module", "module-pipe-source", "file=\(fifo)", "format=s16le",
                                           "rate=\(format.sampleRate)", "channels=\(format.channels)", "channel_map=\(channelMap)",
                                           "source_name=studiopipe", #"source_properties='device.description="Studio Pipe Microphone"'"#],
                                 environment: rig.environment)
        try #require(loaded.status == 0, "pactl load-module: \(loaded.standardError)")
        let feeder = try PipeSourceFeeder(fifo: fifo, bytes: signal.alsaBytes, bytesPerSecond: format.sampleRate * format.bytesPerFrame,
                                          lead: onPipeWire ? 1 : 0)
        return (rig, feeder)
    }

    /// Expects `decoded` (interleaved, `channels` wide) to be `input` from `offset` on, frame for
    /// frame, save for whole frames of silence: on PipeWire, whose pipe source keeps its graph's
    /// pace and plays silence where the FIFO ran dry (the test's feeder held up on a loaded
    /// machine; seen under the AddressSanitizer suite beside another), after which the input goes
    /// on where it left off. Anything else — a frame lost, doubled, changed or out of order — is a
    /// failure, and so is a recording that is mostly such silence.
    static func expectInputWithInsertedSilence(_ decoded: [Int32], input: [Int32], from offset: Int, channels: Int,
                                               sourceLocation: SourceLocation = #_sourceLocation) {
        var next = offset, silentFrames = 0
        for frame in stride(from: 0, to: decoded.count, by: channels) {
            let heard = decoded[frame..<(frame + channels)]
            if next + channels <= input.count && heard.elementsEqual(input[next..<(next + channels)]) {
                next += channels
            } else if heard.allSatisfy({ $0 == 0 }) {
                silentFrames += 1
            } else {
                let problem = "frame \(frame / channels) is not the input's frame \((next - offset) / channels) after the start, nor silence"
                Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation)
                return
            }
        }
        let frames = decoded.count / channels
        if silentFrames > 0 { print("PipeMicrophone: \(silentFrames) of \(frames) frames were silence the pipe source played") }
        #expect(silentFrames <= frames / 4, "\(silentFrames) of \(frames) frames were silence", sourceLocation: sourceLocation)
    }

    /// Where `decoded` (interleaved, `channels` wide) begins in `input`, found by its first frames
    /// at frame-aligned positions. The source reads its FIFO only while a stream records from it,
    /// so a recording starts at the first written frame or, should the server read a little before
    /// hark's stream began, a little later.
    static func offset(of decoded: [Int32], in input: [Int32], channels: Int) throws -> Int {
        let head = Array(decoded.prefix(64 * channels))
        for start in stride(from: 0, through: input.count - decoded.count, by: channels)
        where input[start] == head[0] && Array(input[start..<(start + head.count)]) == head {
            return start
        }
        throw TestRigError("the recording's first frames are not in the input")
    }
}
