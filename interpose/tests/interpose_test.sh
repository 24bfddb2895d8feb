#!/bin/sh
# The built library under LD_PRELOAD: the probe against ref and against the kernel (the
# same checks, and /proc names which one served each), then ordinary programs that never
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
