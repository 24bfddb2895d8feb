#!/bin/sh
# `bazel run //harness:driver -- ARGS`: the driver, run from the directory Bazel was run in
# (Bazel itself starts us inside the runfiles tree).
#  - In the pecs checkout: the checkout's harness/ and its bazel-bin runners, as
#    `PYTHONPATH=harness python3 -m pecs_harness` would use them.
#  - From another workspace (`bazel run @pecs//harness:driver`) or started directly
#    (bazel-bin/harness/driver): pecs's tree in our runfiles, which holds the package, the
#    runners and their expectations files (the driver's data).
set -eu
ws=${BUILD_WORKSPACE_DIRECTORY:-}
if [ -n "$ws" ] && [ -f "$ws/harness/pecs_harness/bazel_run.sh" ]; then
	export PYTHONPATH="$ws/harness${PYTHONPATH:+:$PYTHONPATH}"
else
	# A test that has the driver as data (examples/consumer:driver_test) has TEST_SRCDIR.
	runfiles="${RUNFILES_DIR:-${TEST_SRCDIR:-$0.runfiles}}"
	# pecs's repository is "pecs" in its runfiles whether it is the main workspace or an
	# external one (an external one also sits under */external/pecs with Bazel 4's
	# default --legacy_external_runfiles).
	[ -d "$runfiles/pecs/harness/pecs_harness" ] || {
		echo "pecs driver: no pecs/harness in $runfiles: is the repository named pecs?" >&2
		exit 2
	}
	export PYTHONPATH="$runfiles/pecs/harness${PYTHONPATH:+:$PYTHONPATH}"
fi
dir=${BUILD_WORKING_DIRECTORY:-$ws}
if [ -n "$dir" ]; then
	cd "$dir"
fi
export PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 -m pecs_harness "$@"
