import CALSA

/// A negative return code from an ALSA call, with the call's name.
///
/// ALSA returns `-errno` values; `code` keeps the positive errno.
public struct ALSAError: Error, Equatable, CustomStringConvertible {
    /// The ALSA function that failed, e.g. `snd_pcm_open`.
    public let operation: String
    /// The positive errno ALSA reported.
    public let code: Int32

    init(_ operation: String, returned result: some BinaryInteger) {
        self.operation = operation
        self.code = -Int32(result)
    }

    /// ALSA's text for the code. The corresponding C function is `snd_strerror`.
    public var reason: String { String(cString: snd_strerror(-code)) }

    public var description: String { "\(operation): \(reason)" }
}

/// Why a capture device could not be opened or configured. Each case is a user-facing problem.
public enum CaptureOpenError: Error, Equatable, CustomStringConvertible {
    /// ALSA knows no PCM by this name (for example "Unknown PCM default" with no card and no server).
    case notFound(device: String)
    /// The device exists but cannot be opened: busy, no permission, server not running.
    case unavailable(device: String, reason: String)
    /// The device refuses a requested parameter; `supported` says what it accepts.
    case unsupported(device: String, parameter: String, requested: String, supported: String)
    /// The sound server connected the stream to a source the user's consent does not cover: a
    /// monitor (what the system plays, `isMonitor`) on the microphone's grant, or a microphone on
    /// system audio's. Nothing was recorded.
    case notCoveredByGrant(device: String, source: String, isMonitor: Bool)

    public var description: String {
        switch self {
        case .notFound(let device) where device == "default":
            "no capture device: ALSA has no 'default' device (no sound card and no sound server?); see 'hark devices'"
        case .notFound(let device):
            "no capture device named '\(device)' (see 'hark devices')"
        case .unavailable(let device, let reason):
            "cannot open capture device '\(device)': \(reason) (see 'hark devices')"
        case .unsupported(let device, let parameter, let requested, let supported):
            "capture device '\(device)' does not support \(parameter) \(requested); it supports \(supported)"
        case .notCoveredByGrant(let device, let source, true):
            "'\(device)' now reaches '\(source)', what this computer plays, and hark was allowed the microphone; nothing was recorded (name a microphone with -D, or allow systemAudio)"
        case .notCoveredByGrant(let device, let source, false):
            "'\(device)' now reaches '\(source)', a microphone, and hark was allowed system audio; nothing was recorded (name the monitor with -D, or allow the microphone)"
        }
    }
}
