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
PECS_TESTEE="$*" exec "$runner" --expectations "$expectations" --isolate --quiet $json
