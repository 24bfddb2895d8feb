#!/bin/sh
# The built library under LD_PRELOAD: the probe against ref and against the kernel (the
# same checks, and /proc names which one served each), the probe through wrappers and as
# a host whose workload must go without the library, then ordinary programs that never
# open an event, which must run exactly as without it.
# Usage: interpose_test.sh LIB PROBE
set -eu
lib=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
probe=$2
# Built with a sanitizer (./pecs test's asan and tsan runs), the library needs that
# runtime loaded first, ahead of the uninstrumented programs it goes into.
runtime=$(ldd "$lib" | sed -n 's/.*=> \(\/[^ ]*lib[at]san[^ ]*\) .*/\1/p' | head -1)
[ -z "$runtime" ] || lib="$runtime $lib"
# TSan's own poll/read/close interceptors sit in front of the library's, and run it from
# inside the interceptor, where TSan records accesses but not the locks taken: the
# engine's locked reads then look like races (measured: the ring drain under poll against
# the collector thread, both under one mutex). Ignore accesses made inside interceptors.
case "$runtime" in
*libtsan*) export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}ignore_interceptors_accesses=1" ;;
esac

PECS_IMPL=ref LD_PRELOAD=$lib "$probe" eventpoll
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ]; then
	PECS_IMPL=kernel LD_PRELOAD=$lib "$probe" perf_event
fi

# A parent waiting for the child it samples sees its exit only (interpose/wait.c).
PECS_IMPL=ref LD_PRELOAD=$lib "$probe" childwait
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ]; then
	PECS_IMPL=kernel LD_PRELOAD=$lib "$probe" childwait
fi

# Through a wrapper the probe still runs on ref (its fds are epoll instances): the
# library stays in LD_PRELOAD for what a process that opened no event executes.
PECS_IMPL=ref LD_PRELOAD=$lib timeout 60 "$probe" eventpoll
PECS_IMPL=ref LD_PRELOAD=$lib nice "$probe" eventpoll
PECS_IMPL=ref LD_PRELOAD=$lib sh -c '"$0" eventpoll' "$probe"
PECS_IMPL=ref LD_PRELOAD=$lib timeout 60 sh -c 'nice "$0" eventpoll' "$probe"
# What a process that opened an event executes goes without it, as perf's workload.
# Under TSan that workload keeps the sanitizer's runtime alone in LD_PRELOAD, and dash
# with libtsan alone preloaded dies of SIGSEGV (measured: LD_PRELOAD=libtsan.so.2
# sh -c true), so the plain and ASan runs check it.
case "$runtime" in
*libtsan*) echo "interpose_test: host mode left to the plain and ASan runs (dash dies with libtsan alone preloaded)" ;;
*)
	PECS_IMPL=ref LD_PRELOAD=$lib "$probe" host
	PECS_IMPL=ref LD_PRELOAD=$lib timeout 60 "$probe" host
	;;
esac

out=$(LD_PRELOAD=$lib sh -c 'echo one; ls / >/dev/null && echo two' 2>&1)
[ "$out" = "one
two" ] || { echo "sh under the interposer said: $out" >&2; exit 1; }
# A plugin that does not load: one line on stderr, and perf_event_open fails as ENOSYS.
err=${TEST_TMPDIR:-/tmp}/interpose-err.txt
if PECS_IMPL=/nonexistent/plugin.so LD_PRELOAD=$lib "$probe" eventpoll 2>"$err"; then
	echo "a missing plugin did not fail the probe" >&2
	exit 1
fi
grep -q "cannot load the plugin" "$err" || { cat "$err" >&2; exit 1; }
echo "interpose_test: ok"
