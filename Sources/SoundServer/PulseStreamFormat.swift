import AudioFormat
import CPulse

/// hark's sample formats and speaker positions as libpulse names them. No libpulse call: values only.
enum PulseStreamFormat {
    /// The sample format libpulse delivers `format` in. Each of hark's formats has its exact match
    /// (`S24_LE`, 24 bits in the low three bytes of four, is libpulse's `S24_32LE`).
    static func sampleFormat(_ format: SampleFormat) -> pa_sample_format_t {
        switch format {
        case .s16LE: PA_SAMPLE_S16LE
        case .s24LE: PA_SAMPLE_S24_32LE
        case .s32LE: PA_SAMPLE_S32LE
        case .floatLE: PA_SAMPLE_FLOAT32LE
        }
    }

    /// The speakers hark asks the server for: the layout the user named, else mono, stereo, or WAVE's
    /// default order for the count (what FLAC and WAV assume anyway). The server mixes its source into
    /// these speakers by position, so the recording's channels are exactly these.
    static func requestedLayout(channels: Int, named: ChannelLayout?) -> ChannelLayout? {
        if let named, named.positions.count == channels { return named }
        if channels == 1 { return ChannelLayout([.mono]) }
        return ChannelLayout.waveDefault(channels: channels)
    }

    static func position(_ speaker: SpeakerPosition) -> pa_channel_position_t {
        switch speaker {
        case .mono: PA_CHANNEL_POSITION_MONO
        case .frontLeft: PA_CHANNEL_POSITION_FRONT_LEFT
        case .frontRight: PA_CHANNEL_POSITION_FRONT_RIGHT
        case .frontCenter: PA_CHANNEL_POSITION_FRONT_CENTER
        case .lowFrequency: PA_CHANNEL_POSITION_LFE
        // libpulse's "rear" is ALSA's and WAVE's back pair; its "side" is theirs too.
        case .rearLeft: PA_CHANNEL_POSITION_REAR_LEFT
        case .rearRight: PA_CHANNEL_POSITION_REAR_RIGHT
        case .rearCenter: PA_CHANNEL_POSITION_REAR_CENTER
        case .sideLeft: PA_CHANNEL_POSITION_SIDE_LEFT
        case .sideRight: PA_CHANNEL_POSITION_SIDE_RIGHT
        case .frontLeftCenter: PA_CHANNEL_POSITION_FRONT_LEFT_OF_CENTER
        case .frontRightCenter: PA_CHANNEL_POSITION_FRONT_RIGHT_OF_CENTER
        }
    }

    /// The speaker a libpulse position is, when hark has a name for it (auxiliary and top
    /// positions have none).
    static func speaker(_ position: pa_channel_position_t) -> SpeakerPosition? {
        SpeakerPosition.allCases.first { self.position($0) == position }
    }

    /// `layout` as a libpulse channel map.
    static func channelMap(_ layout: ChannelLayout) -> pa_channel_map {
        var map = pa_channel_map()
        map.channels = UInt8(layout.positions.count)
        withUnsafeMutableBytes(of: &map.map) { slots in
            let positions = slots.bindMemory(to: pa_channel_position_t.self)
            for (index, speaker) in layout.positions.enumerated() { positions[index] = position(speaker) }
        }
        return map
    }

    /// What a libpulse channel map says, or nil when a position has no name in hark.
    static func layout(_ map: pa_channel_map) -> ChannelLayout? {
        var copy = map
        let speakers = withUnsafeBytes(of: &copy.map) { slots in
            slots.bindMemory(to: pa_channel_position_t.self).prefix(Int(map.channels)).map(speaker)
        }
        guard speakers.allSatisfy({ $0 != nil }) else { return nil }
        return ChannelLayout(speakers.compactMap { $0 })
    }
}
