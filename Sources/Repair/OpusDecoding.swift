import COpusEnc

/// Decodes an Ogg Opus stream's audio packets with libopus, to check that a repaired file plays:
/// a multistream decoder set up from OpusHead's channel mapping (family 0 is one stream, one or
/// two channels, coupled when two). Not real-time code.
enum OpusDecoding {
    /// The first packet libopus rejects, described; nil when every one decodes.
    /// The corresponding C functions are `opus_multistream_decoder_create` and `opus_multistream_decode`.
    static func firstFailure(_ stream: OggOpusStream, in bytes: UnsafeRawBufferPointer, shouldStop: () -> Bool = { false }) -> String? {
        let mapping: [UInt8] = stream.mappingFamily == 0 ? Array(0..<UInt8(stream.channels)) : stream.mapping
        let streams = stream.elementaryStreams
        let coupled = stream.coupledElementaryStreams
        var error: Int32 = 0
        guard let decoder = mapping.withUnsafeBufferPointer({
            opus_multistream_decoder_create(48_000, Int32(stream.channels), Int32(streams), Int32(coupled), $0.baseAddress!, &error)
        }) else { return "libopus cannot decode its channel mapping (error \(error))" }
        defer { opus_multistream_decoder_destroy(decoder) }
        var pcm = [Float](repeating: 0, count: 5_760 * stream.channels)  // 120 ms, the longest packet
        for (index, packet) in stream.packets.dropFirst(stream.firstAudioPacket).enumerated() {
            if index % 256 == 255, shouldStop() { return FileRepair.interruptedCheck }
            let data = stream.bytes(of: packet, in: bytes)
            let decoded = pcm.withUnsafeMutableBufferPointer { output in
                data.withUnsafeBufferPointer { opus_multistream_decode_float(decoder, $0.baseAddress, Int32($0.count), output.baseAddress!, 5_760, 0) }
            }
            if decoded < 0 { return "libopus rejects audio packet \(index + 1): \(String(cString: opus_strerror(decoded)))" }
        }
        return nil
    }

    /// Whether libopus reads `packet` as one Opus packet for each of `streams` elementary streams
    /// (RFC 6716 §3.4's framing, self-delimited for all but the last): a packet it would refuse
    /// as "corrupted stream" before decoding a sample (its parts' framing, and their durations
    /// alike). An empty packet is a lost one, which decoders conceal. The corresponding C function
    /// is `opus_multistream_packet_unpad`, run on a copy (it takes the padding out in place).
    static func isWellFramed(_ packet: [UInt8], streams: Int) -> Bool {
        guard !packet.isEmpty else { return true }
        var copy = packet
        guard copy.withUnsafeMutableBufferPointer({ opus_multistream_packet_unpad($0.baseAddress, Int32($0.count), Int32(streams)) }) >= 0
        else { return false }
        return streams == 1 || opusStreamsLastAlike(packet, streams: streams)
    }
}
