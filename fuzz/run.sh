#!/bin/sh
# Runs one fuzz target under libFuzzer with ASan and UBSan for a bounded time.
#
#   fuzz/run.sh TARGET SECONDS [LIBFUZZER_FLAG...]
#
# TARGET: fxt_reader, markup_reader, decoder or attr_open (//fuzz:TARGET_fuzz).
# The seeds are made fresh from vectors/ (fuzz/make_seeds.py); inputs libFuzzer finds
# new coverage with go to $PECS_FUZZ_WORK/TARGET/corpus and are picked up again by the
# next run; a crash is written to $PECS_FUZZ_WORK/TARGET/artifacts/ and the exit code
# is libFuzzer's (0: nothing found). The build uses --config=fuzz in an output base of
# its own ($PECS_FUZZ_OUTPUT_BASE), so switching compilers does not throw away the
# ordinary build.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 TARGET SECONDS [LIBFUZZER_FLAG...]" >&2
	exit 2
fi
target=$1
seconds=$2
shift 2
case $target in
fxt_reader | markup_reader | decoder | attr_open) ;;
*)
	echo "$0: unknown target '$target' (fxt_reader, markup_reader, decoder, attr_open)" >&2
	exit 2
	;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
output_base=${PECS_FUZZ_OUTPUT_BASE:-$(bazel info output_base 2>/dev/null)-fuzz}
work=${PECS_FUZZ_WORK:-${TMPDIR:-/tmp}/pecs-fuzz}/$target

bazel --output_base="$output_base" build --config=fuzz --symlink_prefix=/ \
	"//fuzz:${target}_fuzz"
bin=$(bazel --output_base="$output_base" info --config=fuzz bazel-bin 2>/dev/null)/fuzz/${target}_fuzz

rm -rf "$work/seeds"
mkdir -p "$work/corpus" "$work/artifacts"
/usr/bin/python3 fuzz/make_seeds.py "$target" --dir "$work/seeds" vectors/*/*.json

# A finding stops the run with a report; leaks count as findings (ASan's default).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$work/artifacts/" "$@" "$work/corpus" "$work/seeds"
