/* Field positions of the Fuchsia Trace Format records pecs reads and writes
 * (fuchsia docs/reference/tracing/trace-format.md). Records are runs of little-endian
 * 64-bit words; a field [lo..hi] is inclusive, counted from the least significant bit.
 */
#ifndef PECS_STREAM_FXT_FORMAT_H
#define PECS_STREAM_FXT_FORMAT_H

#include <stdint.h>

#include "pecs/profiler_stream.h"

/* The magic field [24..55] of PECS_FXT_MAGIC_WORD, which a later trace-info record repeats. */
#define REF_FXT_MAGIC_VALUE ((uint32_t)(PECS_FXT_MAGIC_WORD >> 24))
#define REF_FXT_WORD 8u
#define REF_FXT_MAX_WORDS 0xfffu

enum ref_fxt_record_type {
	REF_FXT_METADATA = 0,
	REF_FXT_INIT = 1,
	REF_FXT_STRING = 2,
	REF_FXT_THREAD = 3,
	REF_FXT_EVENT = 4,
	REF_FXT_BLOB = 5,
	REF_FXT_USER_OBJECT = 6,
	REF_FXT_KERNEL_OBJECT = 7,
	REF_FXT_SCHEDULING = 8,
	REF_FXT_LOG = 9,
	REF_FXT_PROFILER = 10,
	REF_FXT_LARGE = 15,
};

enum ref_fxt_metadata_type {
	REF_FXT_META_PROVIDER_INFO = 1,
	REF_FXT_META_PROVIDER_SECTION = 2,
	REF_FXT_META_PROVIDER_EVENT = 3,
	REF_FXT_META_TRACE_INFO = 4,
};

enum ref_fxt_profiler_type {
	REF_FXT_PROF_MODULE = 0,
	REF_FXT_PROF_MMAP = 1,
	REF_FXT_PROF_BACKTRACE = 2,
};

/* A blob record ([16..31] name, [32..46] payload bytes, [48..55] blob type). */
#define REF_FXT_BLOB_DATA 1u
#define REF_FXT_BLOB_MAX_PAYLOAD 0x7fffu

/* pecs's own blob, which the live sampler writes right before a backtrace to carry what
 * FXT has no field for: the sampled thread's user registers and a copy of its stack.
 * A data blob with this inline name; its payload is u64 abi (PECS_SAMPLE_REGS_ABI_*),
 * u64 nr_regs, nr_regs u64 registers in the architecture's perf numbering, then the
 * stack bytes copied from the registers' SP. It belongs to the next record, which must
 * be a backtrace; streams without it (Starnix's) have samples without registers. */
#define REF_FXT_USER_REGS_NAME "pecs.user_regs"
#define REF_FXT_USER_REGS_MAX 64u

/* Bits lo..hi of w. */
static inline uint64_t ref_fxt_field(uint64_t w, unsigned lo, unsigned hi)
{
	unsigned width = hi - lo + 1;

	return width == 64 ? w : (w >> lo) & ((1ull << width) - 1);
}

static inline uint64_t ref_fxt_put(uint64_t v, unsigned lo, unsigned hi)
{
	unsigned width = hi - lo + 1;

	return width == 64 ? v : (v & ((1ull << width) - 1)) << lo;
}

/* String refs are 16 bits: 0 empty, MSB set = inline text of the low 15 bits' length. */
#define REF_FXT_STRREF_INLINE 0x8000u

#endif /* PECS_STREAM_FXT_FORMAT_H */
