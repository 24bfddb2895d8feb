/* What every profiler-stream parser shares: the sample sink, the koid map, error codes
 * with the byte offset they were found at, and counters.
 *
 * A parser is pushed bytes in chunks of any size and calls the sink once per complete
 * sample, in stream order, before it returns. Malformed input stops the parser for good
 * (the error is sticky), but samples already handed to the sink stay delivered.
 */
#ifndef PECS_STREAM_STREAM_H
#define PECS_STREAM_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/profiler_stream.h"
#include "pecs/sample.h"

/* Receives one decoded sample; a negative return stops the parser with REF_STREAM_E_SINK
 * and is handed back to the caller of feed(). The sample and its ips are valid for the
 * call only (the ips may point into the bytes being fed). */
typedef int (*ref_sample_sink)(void *ctx, const struct pecs_sample *s);

/* These structs are built only by code of this tree, which links the readers it was
 * compiled with: they carry no size, and fields are simply added. */

/* Side records a caller may want to see; any member may be NULL. */
struct ref_stream_observer {
	void (*kernel_object)(void *ctx, uint64_t koid, uint8_t obj_type, const char *name,
			      size_t name_len);
	void (*module)(void *ctx, uint64_t pkoid, uint32_t module_id, const char *name,
		       size_t name_len, const uint8_t *build_id, size_t build_id_len);
	void (*mmap)(void *ctx, uint64_t pkoid, uint32_t module_id, uint64_t start,
		     uint64_t range, uint64_t vaddr, uint32_t flags);
};

/* Where decoded samples go and how koids become Linux ids. With koids == NULL and
 * nr_koids == 0 a koid is taken as the Linux id itself (the live sampler writes Linux
 * ids); otherwise a sample whose process or thread koid is not listed is dropped and
 * counted in dropped_unmapped, as Starnix does. The map must not change while a reader
 * made with it is in use: the FXT reader remembers what it said of each koid. */
struct ref_stream_target {
	ref_sample_sink sink;
	void *sink_ctx;
	const struct pecs_koid_map_entry *koids;
	size_t nr_koids;
	const struct ref_stream_observer *observer;
	void *observer_ctx;
};

/* Copies a caller's target into t and its observer, if any, into o, so a reader keeps
 * neither of the caller's; t->observer then points at o. -EINVAL without a target or a
 * sink. */
int ref_stream_target_load(struct ref_stream_target *t, struct ref_stream_observer *o,
			   const struct ref_stream_target *target);

enum ref_stream_errc {
	REF_STREAM_OK = 0,
	REF_STREAM_E_SINK,            /* the sink refused a sample */
	REF_STREAM_E_TRUNCATED,       /* the stream ended inside a record or line */
	REF_STREAM_E_NOMEM,           /* a table the stream needs could not grow (-ENOMEM) */

	REF_FXT_E_MISSING_MAGIC = 100, /* first record is not the magic number record */
	REF_FXT_E_ZERO_SIZE,          /* header size field 0 */
	REF_FXT_E_BAD_MAGIC,          /* trace-info magic record with a wrong value */
	REF_FXT_E_BAD_METADATA,       /* metadata payload longer than its record */
	REF_FXT_E_BAD_INIT,           /* init record not 2 words, or 0 ticks per second */
	REF_FXT_E_BAD_STRING,         /* string text past the record */
	REF_FXT_E_BAD_THREAD,         /* thread index 0 or record not 3 words */
	REF_FXT_E_BAD_STRING_REF,     /* inline string text past the record */
	REF_FXT_E_BAD_KERNEL_OBJECT,  /* kernel object record too short */
	REF_FXT_E_BAD_BACKTRACE,      /* backtrace size differs from its frame count */
	REF_FXT_E_BAD_MODULE,         /* module size differs from its name and build id */
	REF_FXT_E_BAD_MMAP,           /* mmap size differs from its fields */
	REF_FXT_E_BAD_USER_REGS,      /* a pecs.user_regs blob whose payload is malformed */

	REF_MARKUP_E_LINE_TOO_LONG = 200,
	REF_MARKUP_E_BAD_LINE,        /* neither a number, markup, nor blank */
	REF_MARKUP_E_BAD_ELEMENT,     /* unterminated {{{, empty tag, text after }}} */
	REF_MARKUP_E_BAD_NUMBER,      /* pid/tid line out of range */
	REF_MARKUP_E_BAD_BT,          /* bt fields malformed */
	REF_MARKUP_E_BT_OUTSIDE_BLOCK, /* bt before a pid and tid line */
	REF_MARKUP_E_BAD_FRAME_INDEX, /* frame numbers not 0, 1, 2, ... */
	REF_MARKUP_E_TOO_MANY_FRAMES,
	REF_MARKUP_E_BAD_RESET,       /* reset with fields */
	REF_MARKUP_E_BAD_MODULE,
	REF_MARKUP_E_BAD_MMAP,
};

/* Stable upper-case names ("FXT_MISSING_MAGIC"), as the vectors spell them; NULL for
 * unknown codes. */
const char *ref_stream_errc_name(enum ref_stream_errc code);

struct ref_stream_error {
	enum ref_stream_errc code;
	uint64_t offset; /* stream offset of the record or line the error is in */
};

struct ref_stream_stats {
	uint64_t bytes;            /* bytes consumed */
	uint64_t records;          /* FXT records or markup lines fully read */
	uint64_t skipped;          /* unknown records, subtypes or markup tags passed over */
	uint64_t samples;          /* handed to the sink */
	uint64_t dropped_unmapped; /* samples whose koid had no Linux id */
	/* Tolerated oddities, as Fuchsia's parser warns rather than fails: a reference to
	 * an undefined string or thread index, a string record for index 0. */
	uint64_t warnings;
};

/* Largest backtrace either parser accepts: FXT's frame count is a u8. */
#define REF_STREAM_MAX_FRAMES 255u

/* Maps a koid through target's map; 0 with *id set, or -ENOENT. */
int ref_stream_map_koid(const struct ref_stream_target *t, uint64_t koid, uint32_t *id);

#endif /* PECS_STREAM_STREAM_H */
