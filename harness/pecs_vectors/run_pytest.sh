#!/bin/sh
# Bazel test wrapper: runs pytest under Debian's python3 on the files given as arguments
# (paths relative to the workspace root inside the runfiles tree).
set -eu
cd "${TEST_SRCDIR:?}/${TEST_WORKSPACE:?}"
export PYTHONPATH="$PWD/harness${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
export PECS_VECTORS_DIR="$PWD/vectors"
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider \
	--basetemp="${TEST_TMPDIR:-/tmp}/pytest" ${XML_OUTPUT_FILE:+--junitxml="$XML_OUTPUT_FILE"} "$@"
