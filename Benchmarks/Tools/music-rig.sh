# Sourced, not run: the paced rig the side-by-side comparisons record from (threads-vs-pipeline,
# minute-cost-vs-arecord). A private PulseAudio in a new temporary directory: `paplay` plays
# music-like input (hark-signal) into the null sink `music` over and over, and the virtual
# microphone `mic` (module-remap-source over that sink's monitor) is the default source, so `-D
# pulse` is what both hark and arecord record, as on a desktop. Without module-suspend-on-idle (-n)
# no sink ever suspends. hark is installed as a user has it (scripts/install compiles the helper
# hark-privacy-switch with cc; the one SwiftPM links beside .build/release/hark starts in about
# 0.5 ms more of CPU, linked against libstdc++) and allowed the microphone.
#
#   start_music_rig TOOL SECONDS [pulseaudio --load=… arguments]
#
# Sets `work` (the directory: in.raw, asoundrc with `pacedcap`, the server's home and runtime),
# `hark` (the installed binary) and an EXIT trap that stops the player and the server and removes
# `work`. SECONDS is how long the longest recording runs (the input is 30 s longer).
source "$(dirname "${BASH_SOURCE[0]}")/needs.sh"

start_music_rig() {
    local tool=$1 seconds=$2
    shift 2
    need_programs "$tool" pulseaudio pactl paplay arecord python3
    [[ -x $root/.build/release/hark && -x $root/.build/release/hark-signal ]] \
        || { echo "$tool: build hark and hark-signal in release first" >&2; exit 1; }
    work=$(mktemp -d)
    "$root/scripts/install" --no-build --prefix "$work/prefix" >/dev/null 2>&1 \
        || { echo "$tool: scripts/install --no-build --prefix failed" >&2; exit 1; }
    hark=$work/prefix/bin/hark
    player=""
    trap '[[ -n $player ]] && { pkill -P "$player"; kill "$player"; } 2>/dev/null; XDG_RUNTIME_DIR=$work/run pulseaudio -k 2>/dev/null; rm -rf "$work"' EXIT
    "$root/.build/release/hark-signal" $((seconds + 30)) > "$work/in.raw"
    cat > "$work/asoundrc" <<A
pcm.pacedcap { type file; slave.pcm "pulse"; file "/dev/null"; infile "$work/in.raw"; format "raw" }
A
    export ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:$work/asoundrc HOME=$work/home XDG_RUNTIME_DIR=$work/run
    export XDG_CONFIG_HOME=$work/home/.config XDG_STATE_HOME=$work/home/.state
    mkdir -p "$work/home" "$work/run"; chmod 700 "$work/run"
    pulseaudio --daemonize=yes --exit-idle-time=-1 --system=false -n --load=module-native-protocol-unix \
        --load="module-null-sink sink_name=music rate=48000 channels=2" \
        --load="module-remap-source master=music.monitor source_name=mic" "$@" 2>/dev/null
    sleep 1
    # Without a server every command below fails at once, and the figures would be of failures.
    pactl info >/dev/null 2>&1 || { echo "$tool: the private PulseAudio did not start" >&2; exit 1; }
    pactl set-default-source mic
    # Played over and over for as long as the commands run.
    (while paplay --raw --format=s16le --rate=48000 --channels=2 --device=music "$work/in.raw"; do :; done) &
    player=$!
    sleep 1
    "$hark" permissions grant microphone 2>/dev/null
}

