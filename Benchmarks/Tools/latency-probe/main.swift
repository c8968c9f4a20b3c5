// Measures how soon an encoder's output reaches a pipe reader, for Benchmarks/compare.
//
//     latency-probe flac|ogg COMMAND [ARG...]
//
// Runs COMMAND with its stdout on a pipe, reads it, and prints two times in milliseconds since
// the command was started: the first byte (the stream header), and the first byte of encoded
// audio (FLAC: past the last metadata block; Ogg: the first page with a granule position above 0).
// Then it stops the command with SIGTERM (a script's background job ignores SIGINT) and waits for it.
import Realtime
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2, ["flac", "ogg"].contains(arguments[0]) else {
    _ = "usage: latency-probe flac|ogg COMMAND [ARG...]\n".withCString { write(2, $0, strlen($0)) }
    exit(64)
}
let isFLAC = arguments[0] == "flac"

var pipeEnds: [Int32] = [0, 0]
guard pipe(&pipeEnds) == 0 else { exit(71) }
var actions = posix_spawn_file_actions_t()
posix_spawn_file_actions_init(&actions)
posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
let argv = arguments.dropFirst().map { strdup($0) } + [nil]
let start = MonotonicClock.nanoseconds()
var child: pid_t = 0
guard posix_spawnp(&child, arguments[1], &actions, nil, argv, environ) == 0 else { exit(71) }
close(pipeEnds[1])

var stream: [UInt8] = []
var firstByte: Int?
var firstAudio: Int?
var buffer = [UInt8](repeating: 0, count: 65_536)

/// Where encoded audio starts, once the headers are complete; nil while they are still arriving.
func audioOffset(_ bytes: [UInt8]) -> Int? {
    if isFLAC {
        var offset = 4
        while offset + 4 <= bytes.count {
            let isLast = bytes[offset] & 0x80 != 0
            let length = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            offset += 4 + length
            if isLast { return offset }
        }
        return nil
    }
    var offset = 0
    while offset + 27 <= bytes.count {
        var granule: Int64 = 0
        for index in 0..<8 { granule |= Int64(bytes[offset + 6 + index]) << (8 * index) }
        let segments = Int(bytes[offset + 26])
        guard offset + 27 + segments <= bytes.count else { return nil }
        if granule > 0 && granule != -1 { return offset }
        offset += 27 + segments + bytes[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
    }
    return nil
}

while firstAudio == nil {
    let count = read(pipeEnds[0], &buffer, buffer.count)
    if count <= 0 { break }
    let now = MonotonicClock.nanoseconds()
    if firstByte == nil { firstByte = now }
    stream += buffer.prefix(count)
    if let offset = audioOffset(stream), stream.count > offset { firstAudio = now }
}
kill(child, SIGTERM)
// Keep draining so the command can finish its stream.
while read(pipeEnds[0], &buffer, buffer.count) > 0 {}
var status: Int32 = 0
waitpid(child, &status, 0)
/// Milliseconds since the start with one decimal, or "none".
func milliseconds(_ time: Int?) -> String {
    guard let time else { return "none" }
    let tenths = (time - start) / 100_000
    return "\(tenths / 10).\(tenths % 10)"
}
print("first_byte_ms=\(milliseconds(firstByte)) first_audio_ms=\(milliseconds(firstAudio))")
