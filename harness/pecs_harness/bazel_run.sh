#!/bin/sh
# `bazel run //harness:driver -- ARGS`: the driver on the checkout Bazel was run in,
# from the directory it was run in (Bazel itself starts us inside the runfiles tree).
set -eu
if [ -n "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then
	export PYTHONPATH="$BUILD_WORKSPACE_DIRECTORY/harness${PYTHONPATH:+:$PYTHONPATH}"
	cd "${BUILD_WORKING_DIRECTORY:-$BUILD_WORKSPACE_DIRECTORY}"
else
	# Started directly (bazel-bin/harness/pecs_harness): the package is in our runfiles.
	runfiles="${RUNFILES_DIR:-$0.runfiles}"
	export PYTHONPATH="$runfiles/pecs/harness${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 -m pecs_harness "$@"
