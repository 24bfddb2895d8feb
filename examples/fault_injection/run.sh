#!/usr/bin/env bash
# Other systems, faked on this one: the static binary run under strace fault injection
# (perf_event_open answers ENOSYS, as under qemu-user or a kernel without the call; every
# ioctl answers ENOTTY) and under valgrind, each gated by its committed expectations file
# and shown beside Linux in one report.
#
#   examples/fault_injection/run.sh [STATIC_BINARY] [OUT]
#
# STATIC_BINARY defaults to the stamped build (bazel build --config=stamped
# //conformance:pecs-syscall-static); OUT to out/fault_injection. Needs strace (and valgrind
# for that scenario, skipped with a note when it is missing); as root it installs both
# from Debian. PECS_SCENARIOS (default: all) names the ones to run, e.g.
# "linux strace-enosys strace-enotty" for the fast ones. Exit status: the report's (0 when
# every gate passes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-}
out=${2:-$root/out/fault_injection}
if [ -z "$bin" ]; then
	(cd "$root" && bazel build --config=stamped //conformance:pecs-syscall-static >&2)
	bin=$(cd "$root" && bazel info --config=stamped bazel-bin 2>/dev/null)/conformance/pecs-syscall-static
fi
missing=()
for tool in strace valgrind; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v strace >/dev/null || { echo "run.sh: needs strace (apt-get install strace)" >&2; exit 2; }
mkdir -p "$out"
expects=()
imports=()
# scenario LABEL EXPECTATIONS COMMAND...: runs the binary under COMMAND into OUT/LABEL.json.
scenario() {
	local label=$1 expect=$2
	shift 2
	case " ${PECS_SCENARIOS:-$label} " in *" $label "*) ;; *) return 0 ;; esac
	echo "run.sh: $label" >&2
	"$@" "$bin" --quiet --isolate --json "$out/$label.json" >"$out/$label.log" 2>&1 || true
	[ -s "$out/$label.json" ] || { echo "run.sh: $label wrote no results (see $out/$label.log)" >&2; exit 2; }
	expects+=(--expectations "$label=$expect")
	imports+=("import:$label=$out/$label.json")
}
scenario linux "$root/conformance/expectations/syscall.txt" env
scenario strace-enosys "$here/strace-enosys.txt" strace -f -qq -o /dev/null -e trace=perf_event_open \
	-e inject=perf_event_open:error=ENOSYS
scenario strace-enotty "$here/strace-enotty.txt" strace -f -qq -o /dev/null -e trace=ioctl -e inject=ioctl:error=ENOTTY
if command -v valgrind >/dev/null || [ -n "${PECS_SCENARIOS:-}" ]; then
	scenario valgrind-none "$here/valgrind-none.txt" valgrind --tool=none -q
else
	echo "run.sh: no valgrind: its scenario is left out" >&2
fi
cd "$root"
PYTHONPATH=harness exec /usr/bin/python3 -m pecs_harness report --out "$out" "${expects[@]}" "${imports[@]}"
