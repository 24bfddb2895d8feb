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
