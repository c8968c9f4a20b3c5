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
