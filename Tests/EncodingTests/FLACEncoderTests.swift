import AudioFormat
import Encoding
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct FLACEncoderTests {
    @Test func writeFailureIsReportedWithItsErrno() throws {
        // /dev/full fails every write with ENOSPC, as a full disk does.
        let descriptor = open("/dev/full", O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        #expect(throws: EncoderError.writeFailed(errno: ENOSPC)) {
            let encoder = try FLACEncoder(format: format, settings: FLACSettings(), sink: OutputSink(fileDescriptor: descriptor))
            try encoder.finish()
        }
        #expect(EncoderError.writeFailed(errno: ENOSPC).description == "cannot write the output: the disk is full")
    }

    @Test func compressionLevelOutsideZeroToEightIsRefused() {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        #expect(throws: EncoderError.self) {
            _ = try FLACEncoder(format: format, settings: FLACSettings(compressionLevel: 9),
                                sink: OutputSink(fileDescriptor: STDERR_FILENO))
        }
    }

    /// The settings reach libFLAC: read back from the encoder, the levels give libFLAC's presets
    /// (0: block 1152, no LPC; 5, the default: 4096, order 8; 8: 4096, order 12), and `verify` is on.
    @Test func compressionLevelAndVerifyReachLibFLAC() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let path = "/tmp/hark-level-\(getpid()).flac"
        defer { unlink(path) }
        for (settings, block, order, verifying) in [(FLACSettings(compressionLevel: 0), 1152, 0, false),
                                                   (FLACSettings(), 4096, 8, false),
                                                   (FLACSettings(compressionLevel: 8, verify: true), 4096, 12, true)] {
            let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            try #require(file >= 0)
            defer { close(file) }
            let encoder = try FLACEncoder(format: format, settings: settings, sink: OutputSink(fileDescriptor: file))
            #expect(encoder.blockSize == block && encoder.maxLPCOrder == order && encoder.isVerifying == verifying,
                    "level \(settings.compressionLevel): block \(encoder.blockSize), order \(encoder.maxLPCOrder)")
            try encoder.finish()
        }
    }

    @Test func pipeIsNotSeekableButARegularFileIs() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        #expect(!OutputSink(fileDescriptor: fds[1]).isSeekable)
        let path = "/tmp/hark-sink-\(getpid())"
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(file); unlink(path) }
        #expect(OutputSink(fileDescriptor: file).isSeekable)
        let appending = open(path, O_WRONLY | O_APPEND)
        defer { close(appending) }
        #expect(!OutputSink(fileDescriptor: appending).isSeekable, "an appending file cannot have its header rewritten")
    }
}
