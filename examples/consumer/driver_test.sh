#!/bin/sh
# pecs's driver as this workspace runs it (@pecs//harness:driver): it runs the plugin,
# gates it with forward.txt (exit 1 when the gate fails), and drafts the expectations from
# the results, which must name what forward.txt names.
# Usage: driver_test.sh DRIVER PLUGIN EXPECTATIONS
set -eu
driver=$1 plugin=$2 expectations=$3
out=${TEST_UNDECLARED_OUTPUTS_DIR:-$TEST_TMPDIR}/out
"$driver" run --impl "plugin:forward=$plugin" --expectations "forward=$expectations" --out "$out"
"$driver" expectations "$out/forward.json" >"$TEST_TMPDIR/draft.txt"
for line in "$(grep '^@features ' "$expectations" | sed 's/ *#.*//')" \
	'Required.Read.Write.IsEinval'; do
	grep -q "^$line  *#" "$TEST_TMPDIR/draft.txt" || {
		echo "driver_test: the draft lacks '$line':" >&2
		cat "$TEST_TMPDIR/draft.txt" >&2
		exit 1
	}
done
