#!/usr/bin/env bash
# A long meeting recorded as one file per hour, named by the hour it starts:
#
#   samples/meeting.sh [hours] [directory]        (defaults: 1 hour, the current directory)
#
# runs
#   hark record -d <hours × 3600> --max-file-time 3600 -o '<directory>/meeting-%Y%m%d-%H%M.flac'
# Every frame lands in exactly one file; played back to back the parts are the meeting. Ctrl-C
# ends it early with every part finished; `kill -USR1 <hark's pid>` starts a new part at once
# (say, when the agenda moves on).
#
# Environment: HARK (the hark binary; default: .build/release/hark, built if missing),
# HARK_DEVICE (ALSA device; default "default"), MEETING_PART_SECONDS (default 3600; the tests use
# a few seconds), MEETING_SECONDS (overrides hours × 3600).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
hours=${1:-1}
directory=${2:-.}
[[ $hours =~ ^[0-9]+$ && $hours -gt 0 ]] || { echo "meeting: hours must be a whole number above 0" >&2; exit 64; }
part=${MEETING_PART_SECONDS:-3600}
total=${MEETING_SECONDS:-$((hours * 3600))}
hark=${HARK:-$root/.build/release/hark}
if [[ ! -x $hark ]]; then
    (cd "$root" && swift build -c release --product hark >/dev/null)
fi
mkdir -p "$directory"
exec "$hark" record -D "${HARK_DEVICE:-default}" -d "$total" --max-file-time "$part" \
    --tag TITLE=Meeting -o "$directory/meeting-%Y%m%d-%H%M.flac"
