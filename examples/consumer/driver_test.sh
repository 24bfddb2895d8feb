#!/bin/sh
# pecs's driver as this workspace runs it (@pecs//harness:driver): it runs the plugin,
# gates it with forward.txt (exit 1 when the gate fails), and drafts the expectations from
# the results, which must name what forward.txt names; README.md's counts must be this run's.
# Usage: driver_test.sh DRIVER PLUGIN EXPECTATIONS README
set -eu
driver=$1 plugin=$2 expectations=$3 readme=$4
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

# README.md says what this run gives: its numbers are checked here, not remembered. The
# sentence: "... each give N passes as root (M as uid 65534 at paranoid 2), U unsupported
# cases ...". The run is root's, or an unprivileged user's at paranoid 2 or lower.
results="$out/forward.json"
count() { grep -o "\"$1\": [a-z0-9]*" "$results" | head -1 | sed 's/.*: //'; }
sentence=$(tr '\n' ' ' <"$readme" | grep -o 'each give [0-9]* passes as root ([0-9]* as uid 65534 at paranoid 2), [0-9]* unsupported') || {
	echo "driver_test: $readme lacks the sentence with the run's counts" >&2
	exit 1
}
set -- $(echo "$sentence" | tr -c '0-9\n' ' ')
root_passes=$1 unprivileged_passes=$2 unsupported=$5  # $3 and $4: 65534 and 2
if [ "$(count privileged)" = true ]; then want=$root_passes; else want=$unprivileged_passes; fi
got_passes=$(count passed) got_unsupported=$(count unsupported)
if [ "$got_passes" != "$want" ] || [ "$got_unsupported" != "$unsupported" ]; then
	echo "driver_test: $readme says $want passes and $unsupported unsupported for this run" \
		"(privileged $(count privileged)); it gave $got_passes and $got_unsupported:" \
		"write this run's numbers there" >&2
	exit 1
fi
