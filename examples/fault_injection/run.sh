#!/usr/bin/env bash
# Other systems, real or faked on this one, each running the static binary and gated by
# its committed expectations file, shown beside Linux in one report:
#   strace-enosys      strace fault injection: every perf_event_open answers ENOSYS
#   strace-enotty      strace fault injection: every ioctl answers ENOTTY
#   qemu-user          Debian's qemu-user: it has no perf_event_open, so ENOSYS
#   valgrind-none      valgrind --tool=none: its syscall wrappers in between
#   valgrind-memcheck  valgrind's memcheck, which also reads each syscall's arguments
#   userns-noproc      a user namespace (unshare -U -r) with an empty tmpfs over /proc
#
#   examples/fault_injection/run.sh [STATIC_BINARY] [OUT]
#
# STATIC_BINARY defaults to the stamped build (bazel build --config=stamped
# //conformance:pecs-syscall-static); OUT to out/fault_injection. As root it installs the
# missing tools from Debian (strace, valgrind, qemu-user, util-linux); a scenario whose
# tool is missing, or a user namespace this host refuses, is left out with a note.
# PECS_SCENARIOS (default: all) names the ones to run, e.g. "linux strace-enosys
# strace-enotty qemu-user userns-noproc" for the fast ones; a scenario named there that
# cannot run here is an error. Exit status: the report's (0 when every gate passes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-}
out=${2:-$root/out/fault_injection}
if [ -z "$bin" ]; then
	(cd "$root" && bazel build --config=stamped //conformance:pecs-syscall-static >&2)
	bin=$(cd "$root" && bazel info --config=stamped bazel-bin 2>/dev/null)/conformance/pecs-syscall-static
fi
qemu=qemu-$(uname -m)
# The Debian package of each tool.
declare -A PACKAGE=([strace]=strace [valgrind]=valgrind [$qemu]=qemu-user [unshare]=util-linux)
missing=()
for tool in "${!PACKAGE[@]}"; do command -v "$tool" >/dev/null || missing+=("${PACKAGE[$tool]}"); done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
	# apt waits, bounded, for a lock another package manager holds (as ./pecs does).
	wait=(-o DPkg::Lock::Timeout="${PECS_LOCK_WAIT:-600}")
	apt-get update -qq "${wait[@]}" &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${wait[@]}" "${missing[@]}" >/dev/null
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
# available LABEL TEST...: whether TEST says the scenario can run here. When not: a note,
# or an error when PECS_SCENARIOS names it.
available() {
	local label=$1
	shift
	"$@" >/dev/null 2>&1 && return 0
	case " ${PECS_SCENARIOS:-} " in
	*" $label "*) echo "run.sh: $label cannot run here: '$*' failed" >&2; exit 2 ;;
	esac
	echo "run.sh: $label left out: '$*' failed" >&2
	return 1
}
scenario linux "$root/conformance/expectations/syscall.txt" env
scenario strace-enosys "$here/strace-enosys.txt" strace -f -qq -o /dev/null -e trace=perf_event_open \
	-e inject=perf_event_open:error=ENOSYS
scenario strace-enotty "$here/strace-enotty.txt" strace -f -qq -o /dev/null -e trace=ioctl -e inject=ioctl:error=ENOTTY
# qemu-user passes the binary's other syscalls to this kernel, so uname's release (the
# host's) is the version the rest of the system has.
if available qemu-user command -v "$qemu"; then
	scenario qemu-user "$here/qemu-user.txt" "$qemu"
fi
if available valgrind command -v valgrind; then
	scenario valgrind-none "$here/valgrind-none.txt" valgrind --tool=none -q
	# memcheck's findings in the static binary go to the log; the gate is the suite's.
	scenario valgrind-memcheck "$here/valgrind-memcheck.txt" valgrind --tool=memcheck -q
fi
# Root of a user namespace of its own: its capabilities count only inside, and no /proc
# says so. The runner cannot read a host fact there and names each one it assumed.
noproc='mount -t tmpfs none /proc && exec "$@"'
userns=(unshare --user --map-root-user --mount --fork sh -c "$noproc" sh)
if available userns-noproc "${userns[@]}" true; then
	scenario userns-noproc "$here/userns-noproc.txt" "${userns[@]}"
fi
cd "$root"
PYTHONPATH=harness exec /usr/bin/python3 -m pecs_harness report --out "$out" "${expects[@]}" "${imports[@]}"
