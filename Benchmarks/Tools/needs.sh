# Sourced, not run: what the side-by-side tools check before they measure anything, so a missing
# program stops them with one line instead of figures of commands that failed at once.
#
# Exits with one line naming the first of PROGRAMS that is not installed.
#
#   need_programs TOOL PROGRAM...
need_programs() {
    local tool=$1 program
    shift
    for program in "$@"; do
        command -v "$program" >/dev/null \
            || { echo "$tool: needs $program, which is not installed (scripts/install-deps installs it)" >&2; exit 1; }
    done
}
