#!/usr/bin/env bash
# Record a few seconds with hark on a fresh machine, sound card or not.
#
#   samples/record-demo.sh [seconds] [output]      (defaults: 5, demo.flac)
#
# 1. scripts/install-deps: installs the missing Debian/Ubuntu packages, checks for swift.
# 2. swift build -c release --product hark --disable-local-rpath in the repository root, as scripts/install.
# 3. If there is no ALSA capture device (/dev/snd/pcmC*D*c) and no PulseAudio/PipeWire
#    server answers (pactl info), starts samples/virtual-mic.sh (a private PulseAudio
#    playing a sample signal into a null sink) and stops it again on exit. A virtual mic
#    that is already running is used and left running.
# 4. .build/release/hark record -d <seconds> -o <output> (Ctrl-C stops it early).
# 5. Checks the result with an independent reader: flac -t and metaflac for FLAC, opusinfo
#    for Ogg Opus, sox --i for WAV (raw samples have nothing to check).
# Exits with hark's exit code if hark fails.
set -euo pipefail

seconds=${1:-5}
output=${2:-demo.flac}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$script_dir/.." && pwd)
vmic=$script_dir/virtual-mic.sh
hark=$root/.build/release/hark

say() { echo "record-demo: $*" >&2; }

case "$seconds" in
    -h|--help) sed -n '2,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
if [[ $# -gt 2 ]]; then
    say "usage: samples/record-demo.sh [seconds] [output]"
    exit 64
fi
# Checked before anything is installed or built (hark would refuse it only at the end).
if ! [[ $seconds =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || [[ $seconds =~ ^[0.]+$ ]]; then
    say "seconds must be a positive number, not '$seconds'"
    exit 64
fi

say "checking dependencies (scripts/install-deps)"
"$root/scripts/install-deps"

say "building hark (swift build -c release --product hark --disable-local-rpath in $root)"
(cd "$root" && swift build -c release --product hark --disable-local-rpath)

started_vmic=0
cleanup() {
    if [[ $started_vmic -eq 1 ]]; then
        say "stopping the virtual mic"
        "$vmic" stop || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

has_capture_device() {
    compgen -G '/dev/snd/pcmC*c' >/dev/null
}

if has_capture_device; then
    say "using the sound card (ALSA device 'default')"
elif pactl info >/dev/null 2>&1; then
    say "no capture device in /dev/snd; using the running sound server (hark's 'default', through the server's own stream)"
elif "$vmic" status 2>/dev/null; then
    say "no sound card or sound server; using the virtual mic that is already running"
    eval "$("$vmic" env 2>/dev/null)"
else
    say "no sound card or sound server; starting a virtual mic (samples/virtual-mic.sh)"
    started_vmic=1
    "$vmic" start
    eval "$("$vmic" env)"
fi

say "recording $seconds s to $output"
# While hark runs, Ctrl-C is for hark (it stops and finalizes the file); this script
# goes on to check the result. A handler, not '', so that hark does not inherit SIG_IGN.
trap ':' INT
rc=0
"$hark" record -d "$seconds" -o "$output" || rc=$?
trap 'exit 130' INT
if [[ $rc -ne 0 ]]; then
    say "hark failed with exit code $rc"
    exit "$rc"
fi

if [[ $output == - ]]; then
    exit 0
fi
say "checking $output"
case "${output,,}" in
    *.flac)
        if ! flac -t -s "$output"; then say "flac -t: FAILED for $output"; exit 1; fi
        say "flac -t: ok; total samples: $(metaflac --show-total-samples "$output") at $(metaflac --show-sample-rate "$output") Hz, $(metaflac --show-channels "$output") channels"
        ;;
    *.opus|*.ogg)
        if ! info=$(opusinfo "$output" 2>&1); then say "opusinfo: FAILED for $output"; echo "$info" >&2; exit 1; fi
        say "opusinfo: ok; $(grep -m1 'Playback length' <<<"$info" | sed 's/^[[:space:]]*//')"
        ;;
    *.wav)
        if ! info=$(sox --i "$output" 2>&1); then say "sox --i: FAILED for $output"; echo "$info" >&2; exit 1; fi
        say "sox --i: ok; $(grep -m1 '^Duration' <<<"$info")"
        ;;
    *)
        say "raw samples: $(stat -c %s "$output") bytes (no header to check)"
        ;;
esac
