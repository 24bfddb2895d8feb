#!/bin/sh
# Line coverage of the code a fuzz target reaches from a corpus.
#
#   fuzz/coverage.sh TARGET [CORPUS_DIR...]
#
# Builds //fuzz:TARGET_fuzz with --config=fuzz plus clang's source-based coverage, linked
# statically so one binary holds every library's mapping (in an output base of its own),
# runs every input of the corpus once (default: what fuzz/run.sh kept in
# $PECS_FUZZ_WORK/TARGET, corpus and seeds; a target that aborts fails the script), and
# prints llvm-cov's report lines for the sources the target is about: ref/stream for the
# stream targets, ref/attr and engine_open.c for attr_open.
set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 TARGET [CORPUS_DIR...]" >&2
	exit 2
fi
target=$1
shift
case $target in
fxt_reader) files="ref/stream/fxt_reader.c ref/stream/fxt_records.c" ;;
markup_reader) files="ref/stream/markup_reader.c" ;;
decoder) files="ref/stream/decoder.c ref/stream/fxt_reader.c ref/stream/fxt_records.c ref/stream/markup_reader.c" ;;
attr_open) files="ref/attr/attr_copy.c ref/attr/attr_kind.c ref/engine/engine_open.c" ;;
*)
	echo "$0: unknown target '$target'" >&2
	exit 2
	;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. fuzz/packages.sh
fuzz_need_packages clang libclang-rt-14-dev llvm-14
output_base=${PECS_FUZZ_COV_OUTPUT_BASE:-$(bazel info output_base 2>/dev/null)-fuzzcov}
work=${PECS_FUZZ_WORK:-${TMPDIR:-/tmp}/pecs-fuzz}/$target
if [ $# -eq 0 ]; then
	set -- "$work/corpus" "$work/seeds"
fi

bazel --output_base="$output_base" build --config=fuzz --symlink_prefix=/ --dynamic_mode=off \
	--copt=-fprofile-instr-generate --copt=-fcoverage-mapping \
	--linkopt=-fprofile-instr-generate "//fuzz:${target}_fuzz"
bin=$(bazel --output_base="$output_base" info --config=fuzz bazel-bin 2>/dev/null)/fuzz/${target}_fuzz

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
LLVM_PROFILE_FILE="$tmp/run.profraw" "$bin" -runs=0 "$@" >"$tmp/replay.log" 2>&1 || {
	tail -20 "$tmp/replay.log" >&2
	exit 1
}
grep -E "INITED|DONE" "$tmp/replay.log" || true
llvm-profdata-14 merge -sparse -o "$tmp/run.profdata" "$tmp/run.profraw"
# Bazel compiles in a sandbox whose paths the report shows as /proc/self/cwd/...; the
# header, the files the target is about and the total of those lines are kept.
llvm-cov-14 report "$bin" -instr-profile="$tmp/run.profdata" >"$tmp/report.txt"
head -n 1 "$tmp/report.txt"
for f in $files; do
	grep -E "(^|/)$f " "$tmp/report.txt" || echo "$f: not in the report" >&2
done
