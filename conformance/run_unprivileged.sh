#!/bin/sh
# Runs a standalone pecs runner as uid 65534 with no capabilities, the way an unprivileged
# profiler meets the kernel. Usage: run_unprivileged.sh RUNNER EXPECTATIONS [runner args]
set -eu
runner=$1 expectations=$2
shift 2
# Not root: this run is already unprivileged, so run the binary as we are.
drop=
if [ "$(id -u)" = 0 ]; then
	if ! command -v setpriv >/dev/null; then
		echo "run_unprivileged.sh: setpriv (util-linux) is needed to drop root" >&2
		exit 1
	fi
	drop="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
fi
# Bazel's runfiles live under root's home, which uid 65534 cannot traverse.
dir=$(mktemp -d /tmp/pecs-unpriv.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cp "$runner" "$dir/runner"
cp "$expectations" "$dir/expectations.txt"
chmod 0755 "$dir" "$dir/runner"
chmod 0644 "$dir/expectations.txt"
chmod 0777 "$dir"
rc=0
$drop "$dir/runner" --expectations "$dir/expectations.txt" --junit "$dir/junit.xml" \
	--json "$dir/results.json" "$@" || rc=$?
if [ -n "${XML_OUTPUT_FILE:-}" ] && [ -f "$dir/junit.xml" ]; then
	cp "$dir/junit.xml" "$XML_OUTPUT_FILE"
fi
if [ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ] && [ -f "$dir/results.json" ]; then
	cp "$dir/results.json" "$TEST_UNDECLARED_OUTPUTS_DIR/results-unprivileged.json"
fi
exit $rc
