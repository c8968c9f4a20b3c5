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
