#!/bin/sh
# Runs the pipe runner against one testee command with an expectations file, each case in
# its own process. Usage: run_pipe_suite.sh RUNNER EXPECTATIONS TESTEE [testee args]
set -eu
runner=$1 expectations=$2
shift 2
json=
if [ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ]; then
	json="--json=$TEST_UNDECLARED_OUTPUTS_DIR/results.json"
fi
# The pipe cannot carry mmap.vma, prctl.perf_events or fasync (pipe.c, cannot_carry): the
# testee's buffer keeps its own mapping whatever the runner does to its copy, the testee's
# thread owns the events, and no operation carries fcntl. So the claim the file records,
# less those.
narrowed=${TEST_TMPDIR:-/tmp}/pipe-expectations.$$.txt
sed '/^@features/{s/,mmap\.vma//;s/,prctl\.perf_events//;s/,fasync//}' "$expectations" >"$narrowed"
PECS_TESTEE="$*" exec "$runner" --expectations "$narrowed" --isolate --quiet $json
