#!/usr/bin/env bash
# hark as the first stage of a pipeline: Ogg Opus on stdout, read as it is produced.
#
#   samples/pipe-opus.sh [seconds] [output.wav]     (defaults: 5, piped.wav)
#
# runs
#   hark record --format opus --bitrate 64 -d <seconds> -o - | opusdec --quiet - <output.wav>
# hark writes nothing but the stream on stdout (its notices go to stderr), so any program that
# reads Ogg Opus can sit on the other end: opusdec here, or `ffmpeg -i - …`, or `nc` to another
# machine. Pages reach the pipe within --max-delay (200 ms by default).
#
# Environment: HARK (the hark binary; default: .build/release/hark, built if missing),
# HARK_DEVICE (ALSA device; default "default").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-5}
output=${2:-piped.wav}
hark=${HARK:-$root/.build/release/hark}
if [[ ! -x $hark ]]; then
    (cd "$root" && swift build -c release --product hark >/dev/null)
fi
"$hark" record -D "${HARK_DEVICE:-default}" --format opus --bitrate 64 -d "$seconds" -o - \
    | opusdec --quiet - "$output"
# opusdec writes WAV to a name ending in .wav and raw 16-bit samples to any other.
if [[ ${output,,} == *.wav ]]; then
    echo "pipe-opus: decoded $(soxi -s "$output") frames ($(soxi -d "$output")) into $output" >&2
else
    echo "pipe-opus: decoded $(stat -c %s "$output") bytes of raw S16_LE PCM into $output" >&2
fi
