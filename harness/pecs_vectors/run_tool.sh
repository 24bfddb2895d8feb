#!/bin/sh
# Bazel test wrapper: runs `python3 -m pecs_vectors.tool <args>` on the vectors in runfiles.
set -eu
cd "${TEST_SRCDIR:?}/${TEST_WORKSPACE:?}"
export PYTHONPATH="$PWD/harness${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 -m pecs_vectors.tool --vectors-dir "$PWD/vectors" "$@"
