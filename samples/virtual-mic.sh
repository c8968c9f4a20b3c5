#!/usr/bin/env bash
# A virtual microphone for machines with no sound card (containers, CI, VMs).
#
#   samples/virtual-mic.sh start    start a private PulseAudio with a null sink "vmic",
#                                   a microphone source "virtual-mic" fed from that sink,
#                                   made the default source, and play a music-like
#                                   sample signal into the sink, forever
#   samples/virtual-mic.sh env      print export lines; use: eval "$(samples/virtual-mic.sh env)"
#   samples/virtual-mic.sh status   say whether it runs (exit 0 if it does, 1 if not)
#   samples/virtual-mic.sh stop     stop the player and that PulseAudio (by PID), remove the state dir
#
# While it runs and its environment is set (env), ALSA's "default" device routes to this
# PulseAudio (Debian's pulse-alsa.conf hook, package libasound2-plugins), so
#   eval "$(samples/virtual-mic.sh env)"; hark record -d 5 -o x.flac
# records the sample signal. hark -D virtual-mic (or -D "Virtual microphone") names the source.
# The source is a remap of the sink's monitor (module-remap-source), so the sound server lists
# it as a microphone: hark records a monitor ("what the system plays") only with the separate
# systemAudio permission.
#
# State dir: ${HARK_VMIC_DIR:-/tmp/hark-vmic-$(id -u)}. It holds the private
# XDG_RUNTIME_DIR (runtime/, mode 700), the PulseAudio log, the player loop's PID and
# the sample signal (sample.wav). Nothing is ever killed by name: other PulseAudio
# servers on the machine are left alone.
#
# Needs: pulseaudio, pulseaudio-utils (pactl, paplay), libasound2-plugins, sox.
# Everything this script prints goes to stderr, except the output of "env".
set -euo pipefail

state_dir=${HARK_VMIC_DIR:-/tmp/hark-vmic-$(id -u)}
[[ $state_dir == /* ]] || state_dir=$PWD/$state_dir
runtime_dir=$state_dir/runtime
pa_pidfile=$runtime_dir/pulse/pid
player_pidfile=$state_dir/player.pid
marker=$state_dir/.hark-vmic
sample=$state_dir/sample.wav
sink=vmic

say() { echo "virtual-mic: $*" >&2; }
die() { say "$*"; exit 1; }

usage() {
    sed -n '2,25s/^# \{0,1\}//p' "$0" >&2
}

# alive PID: the process exists and is not a zombie. (A daemonized PulseAudio is
# reparented to PID 1, which in some containers never reaps it: kill -0 is not enough.)
alive() {
    local _pid _comm state
    read -r _pid _comm state _ <"/proc/$1/stat" 2>/dev/null || return 1
    [[ $state != Z && $state != X ]]
}

# read_pid FILE: prints the PID stored in FILE if it names a live process.
read_pid() {
    local pid
    [[ -r $1 ]] || return 1
    pid=$(head -n1 "$1" 2>/dev/null | tr -dc '0-9')
    [[ -n $pid ]] && alive "$pid" || return 1
    echo "$pid"
}

pa_pid() {
    local pid
    pid=$(read_pid "$pa_pidfile") || return 1
    # Guard against a stale pid file whose PID now belongs to something else.
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == pulseaudio ]] || return 1
    echo "$pid"
}

player_pid() { read_pid "$player_pidfile"; }

# Run a command against the private PulseAudio.
with_pa() {
    XDG_RUNTIME_DIR=$runtime_dir PULSE_SERVER=unix:$runtime_dir/pulse/native "$@"
}

need() {
    local cmd
    for cmd in "$@"; do
        command -v "$cmd" >/dev/null 2>&1 \
            || die "'$cmd' not found; run scripts/install-deps (packages pulseaudio, pulseaudio-utils, libasound2-plugins, sox)"
    done
}

# A 10 s, 48 kHz stereo, music-like signal: four plucked chords (Am F C G) over a sine bass,
# with tremolo, a slightly delayed right channel and a little pink noise.
make_sample() {
    local tmp=$state_dir/sample.tmp
    mkdir -p "$tmp"
    chord() { # chord OUT NOTE NOTE NOTE BASS
        sox -r 48000 -c 4 -n "$tmp/$1" synth 2.5 pluck "$2" pluck "$3" pluck "$4" sine "$5" \
            remix 1,2,3,4v0.4 fade h 0.01 2.5 0.4
    }
    chord 1.wav A3 C4 E4 A2
    chord 2.wav F3 A3 C4 F2
    chord 3.wav C4 E4 G4 C3
    chord 4.wav G3 B3 D4 G2
    sox "$tmp/1.wav" "$tmp/2.wav" "$tmp/3.wav" "$tmp/4.wav" -c 2 "$tmp/chords.wav" \
        remix 1 1 delay 0 0.012 trim 0 10 tremolo 5 30
    sox -n -r 48000 -c 2 "$tmp/noise.wav" synth 10 pinknoise vol 0.02
    sox -m "$tmp/chords.wav" "$tmp/noise.wav" -r 48000 -c 2 -b 16 "$tmp/sample.wav" gain -n -6
    mv "$tmp/sample.wav" "$sample"
    rm -rf "$tmp"
}

start_pulseaudio() {
    local pid
    if pid=$(pa_pid); then
        say "PulseAudio already running (pid $pid)"
        return
    fi
    # A player loop left from an earlier PulseAudio would watch the wrong PID: end it.
    if pid=$(player_pid); then
        stop_player "$pid"
    fi
    say "starting PulseAudio (runtime dir $runtime_dir)"
    if ! XDG_RUNTIME_DIR=$runtime_dir pulseaudio --daemonize=yes --exit-idle-time=-1 --system=false -n \
        --log-target=file:"$state_dir/pulseaudio.log" \
        --load=module-native-protocol-unix \
        --load="module-null-sink sink_name=$sink rate=48000 channels=2" \
        >>"$state_dir/pulseaudio.out" 2>&1; then
        cat "$state_dir/pulseaudio.out" "$state_dir/pulseaudio.log" >&2 2>/dev/null || true
        die "PulseAudio failed to start (log: $state_dir/pulseaudio.log)"
    fi
    # --daemonize returns once the daemon is up; still wait for the socket to answer.
    local i
    for ((i = 0; i < 50; i++)); do
        with_pa pactl info >/dev/null 2>&1 && break
        sleep 0.1
    done
    with_pa pactl info >/dev/null 2>&1 || die "PulseAudio does not answer (log: $state_dir/pulseaudio.log)"
    pid=$(pa_pid) || die "PulseAudio started but $pa_pidfile names no pulseaudio process"
    say "PulseAudio running (pid $pid)"
}

start_player() {
    local pid papid
    if pid=$(player_pid); then
        say "player already running (pid $pid)"
        return
    fi
    papid=$(pa_pid) || die "PulseAudio is not running"
    rm -f "$player_pidfile"
    # A new session (setsid) so that the loop and its paplay form one process group that
    # stop can end by PID, and so that the loop outlives this script and its terminal.
    # The loop ends by itself when that PulseAudio is gone.
    # shellcheck disable=SC2016 # expanded by the inner bash, from its arguments
    XDG_RUNTIME_DIR=$runtime_dir PULSE_SERVER=unix:$runtime_dir/pulse/native \
        setsid bash -c '
            echo $$ >"$1"
            alive() { local _p _c st _r; read -r _p _c st _r <"/proc/$1/stat" 2>/dev/null && [[ $st != [ZX] ]]; }
            while alive "$2"; do
                paplay --latency-msec=20 -d "$3" "$4" || sleep 0.5
            done
        ' hark-vmic-player "$player_pidfile" "$papid" "$sink" "$sample" \
        </dev/null >>"$state_dir/player.log" 2>&1 &
    local i
    for ((i = 0; i < 50; i++)); do
        pid=$(player_pid) && break
        sleep 0.1
    done
    pid=$(player_pid) || die "player loop did not start (log: $state_dir/player.log)"
    say "playing $sample into sink $sink (player pid $pid)"
}

cmd_start() {
    need pulseaudio pactl paplay sox setsid
    if [[ -e $state_dir && ! -e $marker ]] && [[ -n $(ls -A "$state_dir" 2>/dev/null) ]]; then
        die "$state_dir exists and was not made by this script; set HARK_VMIC_DIR to another path"
    fi
    mkdir -p "$state_dir"
    touch "$marker"
    mkdir -p "$runtime_dir"
    chmod 700 "$runtime_dir"
    start_pulseaudio
    with_pa pactl set-default-sink "$sink"
    local sources
    sources=$(with_pa pactl list short sources)
    if ! grep -q "^[0-9]*[[:space:]]virtual-mic[[:space:]]" <<<"$sources"; then
        with_pa pactl load-module module-remap-source source_name=virtual-mic master="$sink.monitor" \
            "source_properties='device.description=\"Virtual microphone (hark sample)\"'" >/dev/null
    fi
    with_pa pactl set-default-source virtual-mic
    if [[ ! -s $sample ]]; then
        say "generating sample signal $sample"
        make_sample
    fi
    start_player
    say "virtual mic ready: default source virtual-mic; for other programs: eval \"\$($0 env)\""
}

cmd_env() {
    if ! pa_pid >/dev/null; then
        say "warning: not running (start it with: $0 start)"
    fi
    printf 'export XDG_RUNTIME_DIR=%q\n' "$runtime_dir"
    printf 'export PULSE_SERVER=%q\n' "unix:$runtime_dir/pulse/native"
}

cmd_status() {
    local pid ppid_=""
    if pid=$(pa_pid); then
        ppid_=$(player_pid) || ppid_=""
        if [[ -n $ppid_ ]]; then
            say "running: PulseAudio pid $pid, player pid $ppid_, state dir $state_dir"
        else
            say "running: PulseAudio pid $pid, player NOT running, state dir $state_dir"
        fi
        return 0
    fi
    say "not running (state dir $state_dir)"
    return 1
}

# kill_and_wait PID [group]: SIGTERM, up to 5 s, then SIGKILL.
kill_and_wait() {
    local pid=$1 target=$1 i
    [[ ${2:-} == group ]] && target=-$1
    kill -TERM -- "$target" 2>/dev/null || return 0
    for ((i = 0; i < 50; i++)); do
        alive "$pid" || return 0
        sleep 0.1
    done
    kill -KILL -- "$target" 2>/dev/null || true
}

stop_player() {
    local pid=$1
    # The loop leads its own process group (setsid): end it together with its paplay.
    if [[ $(ps -o pgid= -p "$pid" | tr -d ' ') == "$pid" ]]; then
        kill_and_wait "$pid" group
    else
        local children
        children=$(ps -o pid= --ppid "$pid" | tr -d ' ' || true)
        kill_and_wait "$pid"
        # shellcheck disable=SC2086 # word splitting of the PID list is intended
        [[ -z $children ]] || kill -TERM $children 2>/dev/null || true
    fi
    rm -f "$player_pidfile"
    say "player stopped (pid $pid)"
}

cmd_stop() {
    local pid
    if pid=$(player_pid); then
        stop_player "$pid"
    fi
    if pid=$(pa_pid); then
        kill_and_wait "$pid"
        say "PulseAudio stopped (pid $pid)"
    fi
    if [[ -e $marker ]]; then
        rm -rf -- "$state_dir"
        say "removed $state_dir"
    elif [[ -e $state_dir ]]; then
        say "not removing $state_dir: not made by this script"
    else
        say "not running"
    fi
}

# PulseAudio server strings (PULSE_SERVER) are space-separated lists: no blanks in the path.
if [[ $state_dir =~ [[:space:]] ]]; then
    die "the state dir '$state_dir' contains blanks, which PULSE_SERVER cannot carry; set HARK_VMIC_DIR to another path"
fi

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) cmd_env ;;
    -h|--help|help) usage ;;
    *) usage; exit 64 ;;
esac
