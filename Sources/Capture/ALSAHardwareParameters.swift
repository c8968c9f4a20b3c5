import AudioFormat
import CALSA

/// The C calls that negotiate a PCM's hardware and software parameters (`snd_pcm_hw_params_*`,
/// `snd_pcm_sw_params_*`). Runs once, before capture starts; not real-time safe.
struct ALSAHardwareParameters: ~Copyable {
    private let pcm: OpaquePointer
    private let device: String
    private let params: OpaquePointer

    /// The full configuration space of `pcm`. The corresponding C functions are
    /// `snd_pcm_hw_params_malloc` (the `_alloca` macro is not callable from Swift) and `snd_pcm_hw_params_any`.
    init(pcm: OpaquePointer, device: String) throws(CaptureOpenError) {
        var allocated: OpaquePointer?
        let result = snd_pcm_hw_params_malloc(&allocated)
        guard result == 0, let allocated else {
            throw .unavailable(device: device, reason: ALSAError("snd_pcm_hw_params_malloc", returned: result).reason)
        }
        let any = snd_pcm_hw_params_any(pcm, allocated)
        guard any >= 0 else {
            snd_pcm_hw_params_free(allocated)
            throw .unavailable(device: device, reason: ALSAError("snd_pcm_hw_params_any", returned: any).reason)
        }
        self.pcm = pcm
        self.device = device
        self.params = allocated
    }

    deinit { snd_pcm_hw_params_free(params) }

    /// Narrows the space to `request` and installs it; returns what the device chose.
    consuming func negotiate(_ request: CaptureRequest) throws(CaptureOpenError) -> NegotiatedCapture {
        try check(snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED),
                  parameter: "interleaved access", requested: "", supported: "only mmap or non-interleaved access")
        let format = request.format
        let alsaFormat = format.sampleFormat.alsaFormat
        if snd_pcm_hw_params_test_format(pcm, params, alsaFormat) < 0 {
            throw .unsupported(device: device, parameter: "sample format", requested: format.sampleFormat.alsaName,
                               supported: supportedFormats())
        }
        try check(snd_pcm_hw_params_set_format(pcm, params, alsaFormat), parameter: "sample format",
                  requested: format.sampleFormat.alsaName, supported: supportedFormats())
        if snd_pcm_hw_params_test_channels(pcm, params, UInt32(format.channels)) < 0 {
            throw .unsupported(device: device, parameter: "channel count", requested: "\(format.channels)",
                               supported: range(snd_pcm_hw_params_get_channels_min, snd_pcm_hw_params_get_channels_max,
                                                unit: "channels"))
        }
        try check(snd_pcm_hw_params_set_channels(pcm, params, UInt32(format.channels)), parameter: "channel count",
                  requested: "\(format.channels)", supported: "")
        // Let ALSA's plug layer resample when the hardware cannot run the rate natively, so a
        // requested rate is met exactly instead of silently approximated.
        _ = snd_pcm_hw_params_set_rate_resample(pcm, params, 1)
        if snd_pcm_hw_params_test_rate(pcm, params, UInt32(format.sampleRate), 0) < 0 {
            throw .unsupported(device: device, parameter: "rate", requested: "\(format.sampleRate) Hz",
                               supported: rateRange())
        }
        try check(snd_pcm_hw_params_set_rate(pcm, params, UInt32(format.sampleRate), 0), parameter: "rate",
                  requested: "\(format.sampleRate) Hz", supported: rateRange())

        var bufferTime = UInt32(request.bufferMicroseconds)
        var periodTime = UInt32(request.periodMicroseconds)
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_buffer_time_near(pcm, params, &bufferTime, &direction),
                  parameter: "buffer time", requested: "\(request.bufferMicroseconds) µs", supported: "")
        direction = 0
        try check(snd_pcm_hw_params_set_period_time_near(pcm, params, &periodTime, &direction),
                  parameter: "period time", requested: "\(request.periodMicroseconds) µs", supported: "")
        let installed = snd_pcm_hw_params(pcm, params)
        guard installed >= 0 else {
            throw .unavailable(device: device, reason: ALSAError("snd_pcm_hw_params", returned: installed).reason)
        }

        var periodFrames = snd_pcm_uframes_t()
        var bufferFrames = snd_pcm_uframes_t()
        _ = snd_pcm_hw_params_get_period_size(params, &periodFrames, &direction)
        _ = snd_pcm_hw_params_get_buffer_size(params, &bufferFrames)
        let monotonic = try installSoftwareParameters(periodFrames: periodFrames, bufferFrames: bufferFrames)
        let map = ALSAChannelMap.current(pcm, channels: format.channels)
        return NegotiatedCapture(device: device, format: format, periodFrames: Int(periodFrames),
                                 bufferFrames: Int(bufferFrames), channelLayout: map?.layout,
                                 deviceChannelMap: map?.names, hasMonotonicTimestamps: monotonic)
    }

    /// What the device accepts for interleaved capture, with resampling allowed as `negotiate`
    /// allows it. Only narrows the space to interleaved access; the `test` calls change nothing.
    /// The corresponding C functions are `snd_pcm_hw_params_get_{rate,channels}_{min,max}` and
    /// `snd_pcm_hw_params_test_{format,rate}`.
    consuming func capabilities() throws(CaptureOpenError) -> DeviceCapabilities {
        guard snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED) >= 0 else {
            throw .unavailable(device: device, reason: "it offers only mmap or non-interleaved access, which hark does not use")
        }
        _ = snd_pcm_hw_params_set_rate_resample(pcm, params, 1)
        var lowRate: UInt32 = 0, highRate: UInt32 = 0, direction: Int32 = 0
        _ = snd_pcm_hw_params_get_rate_min(params, &lowRate, &direction)
        _ = snd_pcm_hw_params_get_rate_max(params, &highRate, &direction)
        var lowChannels: UInt32 = 0, highChannels: UInt32 = 0
        _ = snd_pcm_hw_params_get_channels_min(params, &lowChannels)
        _ = snd_pcm_hw_params_get_channels_max(params, &highChannels)
        let commonRates = DeviceCapabilities.commonRates.filter {
            snd_pcm_hw_params_test_rate(pcm, params, UInt32($0), 0) == 0
        }
        let harkFormats = SampleFormat.allCases.filter { snd_pcm_hw_params_test_format(pcm, params, $0.alsaFormat) == 0 }
        let harkFormatValues = Set(harkFormats.map(\.alsaFormat.rawValue))
        // Every PCM format ALSA defines (linear integer or float), skipping the gaps in its numbering
        // and DSD, 1-bit audio that snd_pcm_format_linear counts as linear.
        let otherFormats = (0...SND_PCM_FORMAT_LAST.rawValue).map { snd_pcm_format_t(rawValue: $0) }.filter { format in
            !harkFormatValues.contains(format.rawValue)
                && (snd_pcm_format_linear(format) == 1 || snd_pcm_format_float(format) == 1)
                && snd_pcm_format_name(format) != nil
                && snd_pcm_hw_params_test_format(pcm, params, format) == 0
        }.map { String(cString: snd_pcm_format_name($0)) }.filter { !$0.hasPrefix("DSD") }
        return DeviceCapabilities(
            rates: Int(lowRate)...Int(max(lowRate, highRate)), commonRates: commonRates, sampleFormats: harkFormats,
            otherFormats: otherFormats, channels: Int(lowChannels)...Int(max(lowChannels, highChannels)),
            channelMaps: ALSAChannelMap.offered(pcm).map(\.names))
    }

    /// Wakes the reader once a period is ready, starts on the first read, and timestamps status
    /// on CLOCK_MONOTONIC, so an overrun's length and the first sample's time can be measured.
    /// Returns whether the device took the monotonic clock. The corresponding C functions are
    /// `snd_pcm_sw_params_*`.
    private func installSoftwareParameters(periodFrames: snd_pcm_uframes_t, bufferFrames: snd_pcm_uframes_t)
        throws(CaptureOpenError) -> Bool
    {
        var software: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&software) == 0, let software else {
            throw .unavailable(device: device, reason: "out of memory for software parameters")
        }
        defer { snd_pcm_sw_params_free(software) }
        _ = snd_pcm_sw_params_current(pcm, software)
        _ = snd_pcm_sw_params_set_avail_min(pcm, software, periodFrames)
        _ = snd_pcm_sw_params_set_start_threshold(pcm, software, 1)
        _ = snd_pcm_sw_params_set_stop_threshold(pcm, software, bufferFrames)
        _ = snd_pcm_sw_params_set_tstamp_mode(pcm, software, SND_PCM_TSTAMP_ENABLE)
        let monotonic = snd_pcm_sw_params_set_tstamp_type(pcm, software, SND_PCM_TSTAMP_TYPE_MONOTONIC) == 0
        let result = snd_pcm_sw_params(pcm, software)
        guard result >= 0 else {
            throw .unavailable(device: device, reason: ALSAError("snd_pcm_sw_params", returned: result).reason)
        }
        return monotonic
    }

    private func check(_ result: Int32, parameter: String, requested: String, supported: String)
        throws(CaptureOpenError)
    {
        guard result < 0 else { return }
        if supported.isEmpty {
            throw .unavailable(device: device, reason: "cannot set \(parameter): \(ALSAError("", returned: result).reason)")
        }
        throw .unsupported(device: device, parameter: parameter, requested: requested, supported: supported)
    }

    private func supportedFormats() -> String {
        let names = SampleFormat.allCases
            .filter { snd_pcm_hw_params_test_format(pcm, params, $0.alsaFormat) == 0 }
            .map(\.alsaName)
        return names.isEmpty ? "none of S16_LE, S24_LE, S32_LE, FLOAT_LE" : names.joined(separator: ", ")
    }

    private func rateRange() -> String {
        var low: UInt32 = 0, high: UInt32 = 0, direction: Int32 = 0
        _ = snd_pcm_hw_params_get_rate_min(params, &low, &direction)
        _ = snd_pcm_hw_params_get_rate_max(params, &high, &direction)
        // What hark can ask of it: a plugin that says 1–384000 Hz is told 500 Hz is too low by
        // hark, not by the device.
        let rates = PCMFormat.recordableRates
        low = max(low, UInt32(rates.lowerBound))
        high = min(high, UInt32(rates.upperBound))
        return low == high ? "only \(low) Hz" : "\(low)–\(high) Hz"
    }

    private func range(
        _ minimum: (OpaquePointer?, UnsafeMutablePointer<UInt32>?) -> Int32,
        _ maximum: (OpaquePointer?, UnsafeMutablePointer<UInt32>?) -> Int32,
        unit: String
    ) -> String {
        var low: UInt32 = 0, high: UInt32 = 0
        _ = minimum(params, &low)
        _ = maximum(params, &high)
        // "only 1 channel", "1–2 channels"
        return low == high ? "only \(low) \(low == 1 ? String(unit.dropLast()) : unit)" : "\(low)–\(high) \(unit)"
    }
}

extension SampleFormat {
    var alsaFormat: snd_pcm_format_t {
        switch self {
        case .s16LE: SND_PCM_FORMAT_S16_LE
        case .s24LE: SND_PCM_FORMAT_S24_LE
        case .s32LE: SND_PCM_FORMAT_S32_LE
        case .floatLE: SND_PCM_FORMAT_FLOAT_LE
        }
    }
}
