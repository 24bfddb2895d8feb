#!/bin/sh
# Runs the plugin runner on one plugin with its expectations file, each case in its own
# process. Usage: run_plugin_suite.sh RUNNER PLUGIN EXPECTATIONS [runner args]
set -eu
runner=$1 plugin=$2 expectations=$3
shift 3
json=
if [ -n "${TEST_UNDECLARED_OUTPUTS_DIR:-}" ]; then
	json="--json=$TEST_UNDECLARED_OUTPUTS_DIR/results.json"
fi
exec "$runner" --plugin "$plugin" --expectations "$expectations" --isolate --quiet $json "$@"
