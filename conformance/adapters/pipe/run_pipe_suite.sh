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
# The pipe cannot carry mmap.vma or prctl.perf_events (pipe.c, cannot_carry): the testee's
# buffer keeps its own mapping whatever the runner does to its copy, and the testee's
# thread owns the events. So the claim the file records, less those.
narrowed=${TEST_TMPDIR:-/tmp}/pipe-expectations.$$.txt
sed '/^@features/{s/,mmap\.vma//;s/,prctl\.perf_events//}' "$expectations" >"$narrowed"
PECS_TESTEE="$*" exec "$runner" --expectations "$narrowed" --isolate --quiet $json
