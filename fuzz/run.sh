#!/bin/sh
# Runs fuzz targets under libFuzzer with ASan and UBSan for a bounded time.
#
#   fuzz/run.sh TARGET SECONDS [LIBFUZZER_FLAG...]
#
# TARGET: fxt_reader, markup_reader, decoder or attr_open (//fuzz:TARGET_fuzz), or all
# (each in turn, SECONDS each; the CI form). The seeds are made fresh from vectors/
# (fuzz/make_seeds.py); inputs with new coverage go to $PECS_FUZZ_WORK/TARGET/corpus
# (default /tmp/pecs-fuzz) and are picked up again by the next run; a finding is written
# to $PECS_FUZZ_WORK/TARGET/artifacts/ and makes the exit code non-zero. The build uses
# --config=fuzz in an output base of its own ($PECS_FUZZ_OUTPUT_BASE), so switching
# compilers does not throw away the ordinary build.
set -eu

TARGETS="fxt_reader markup_reader decoder attr_open"

if [ $# -lt 2 ]; then
	echo "usage: $0 TARGET|all SECONDS [LIBFUZZER_FLAG...]" >&2
	exit 2
fi
target=$1
seconds=$2
shift 2
case " $TARGETS all " in
*" $target "*) ;;
*)
	echo "$0: unknown target '$target' ($TARGETS, all)" >&2
	exit 2
	;;
esac
case $seconds in
'' | *[!0-9]*)
	echo "$0: SECONDS must be a number, not '$seconds'" >&2
	exit 2
	;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. fuzz/packages.sh
fuzz_need_packages clang libclang-rt-14-dev
output_base=${PECS_FUZZ_OUTPUT_BASE:-$(bazel info output_base 2>/dev/null)-fuzz}
work_root=${PECS_FUZZ_WORK:-${TMPDIR:-/tmp}/pecs-fuzz}
[ "$target" = all ] && targets=$TARGETS || targets=$target

labels=
for t in $targets; do
	labels="$labels //fuzz:${t}_fuzz"
done
# shellcheck disable=SC2086 # labels is a list
bazel --output_base="$output_base" build --config=fuzz --symlink_prefix=/ $labels
bin_dir=$(bazel --output_base="$output_base" info --config=fuzz bazel-bin 2>/dev/null)/fuzz

# A finding stops the run with a report; leaks count as findings (ASan's default).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=
for t in $targets; do
	work=$work_root/$t
	rm -rf "$work/seeds"
	mkdir -p "$work/corpus" "$work/artifacts"
	/usr/bin/python3 fuzz/make_seeds.py "$t" --dir "$work/seeds" vectors/*/*.json
	echo "== $t: ${seconds}s, corpus $work/corpus" >&2
	if ! "$bin_dir/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" "$@" \
		"$work/corpus" "$work/seeds"; then
		echo "== $t: FOUND A FAULT, see $work/artifacts/" >&2
		failed="$failed $t"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz/run.sh: findings in:$failed" >&2
	exit 1
fi
echo "fuzz/run.sh: no findings in $targets (${seconds}s each)" >&2
