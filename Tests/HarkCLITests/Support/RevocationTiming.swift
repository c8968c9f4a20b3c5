import Foundation

/// How long the capture went on after a revocation: the promise is that a recording stops within
/// a second, so no audio more than a second after it is recorded. Timed on the audio's own clock
/// against the kernel's, never by this test's clock or the output's mtime:
///
/// - the revocation is the ctime of the file whose replacement revoked (a rename sets the ctime):
///   the revocation stamp that `permissions deny`/`reset` renames into place
///   (`SecureFile.replaceAtomically`), which is what an "Allow Once" recording watches; or the
///   desktop switch's keyfile or dconf database. A reset's removal of the store, which already
///   revokes a stored consent, comes a few fsyncs earlier: that only makes the figure smaller;
/// - the capture's end is the last recorded sample's time: the first sample's wall-clock time
///   (`HARK_FIRST_SAMPLE_TIME`, from the device's timestamp) plus the samples recorded, at the
///   rate (the sources here are paced: a null sink keeps the system's time).
///
/// What comes after the stop is left out on purpose: draining and encoding the ring, the files'
/// fsync, the header's patch and the access log. They are a finalization, not listening, and on
/// a loaded disk under a sanitizer they took seconds (an output's mtime came 1.1 and 3.4 s after
/// the reset, with the capture stopped well within the second). That the file is finished is
/// checked by each test on its own (flac -t, the samples).
///
/// The kernel's ctime is its coarse clock (a tick, ≤ 10 ms, behind), nothing beside the second
/// the promise allows, so the bound has no slack for it.
func revocationStopDelay(_ rig: ALSATestRig, output: String) throws -> Double {
    let stamp = rig.directory.appendingPathComponent("config/hark/permissions/.dev.hark.cli.microphone.revoked").path
    return try lastSampleTime(flac: output) - changeTime(of: stamp)
}

/// When `path` was last renamed into place or changed (its ctime), in seconds since 1970.
func changeTime(of path: String) throws -> Double {
    var info = stat()
    guard stat(path, &info) == 0 else { throw TestRigError("cannot stat \(path)") }
    return Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec) / 1e9
}

/// The wall-clock time of a finished FLAC recording's last sample: its `HARK_FIRST_SAMPLE_TIME`
/// plus its samples at its rate, in seconds since 1970.
func lastSampleTime(flac path: String) throws -> Double {
    let tags = try FLACTools.tags(path)
    guard let stamp = tags.first(where: { $0.hasPrefix("HARK_FIRST_SAMPLE_TIME=") })?.dropFirst(23),
          let first = preciseTime(String(stamp)) else { throw TestRigError("no first sample's time in \(path): \(tags)") }
    guard let samples = try FLACTools.totalSamples(path), let rate = Int(try FLACTools.metaflac(["--show-sample-rate", path])) else {
        throw TestRigError("no sample count or rate in \(path)")
    }
    return first + Double(samples) / Double(rate)
}

/// `2026-11-27T21:18:01.690312Z` in seconds since 1970, microseconds kept (Foundation's ISO 8601
/// formatter keeps milliseconds only).
func preciseTime(_ text: String) -> Double? {
    guard text.count == 27, text.hasSuffix("Z"), let whole = ISO8601DateFormatter().date(from: String(text.prefix(19)) + "Z"),
          let micro = Double("0." + text.dropFirst(20).prefix(6)) else { return nil }
    return whole.timeIntervalSince1970 + micro
}
