import Foundation

/// How long hark took from a revocation to a finished file, by the kernel's timestamps rather
/// than this test's clock (which would add hark's fsync, its access log, its exit, a sanitizer's
/// leak check at exit, and this process's own scheduling on a loaded machine):
///
/// - from the revocation stamp's ctime: when `permissions deny`/`reset` renamed the new token
///   into place (`SecureFile.replaceAtomically`; a rename sets the ctime), which is what an
///   "Allow Once" recording watches. A reset's removal of the store, which already revokes a
///   stored consent, comes a few fsyncs earlier: that only makes the figure smaller (even
///   negative, when those fsyncs are slow);
/// - to the output's mtime: hark's last write to it is the finished header (STREAMINFO with the
///   total and the MD5, the seek table), after the capture stopped and the ring was drained
///   and encoded. Nothing is written to it after that.
///
/// Both are the kernel's coarse real-time clock: the difference may be off by a tick (≤ 10 ms),
/// nothing beside the second the promise allows, so the bound has no slack for it.
func revocationStopDelay(_ rig: ALSATestRig, output: String) throws -> Double {
    var info = stat()
    guard stat(output, &info) == 0 else { throw TestRigError("cannot stat \(output)") }
    let finished = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    let stamp = rig.directory.appendingPathComponent("config/hark/permissions/.dev.hark.cli.microphone.revoked").path
    guard stat(stamp, &info) == 0 else { throw TestRigError("cannot stat \(stamp)") }
    let revoked = Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec) / 1e9
    return finished - revoked
}
