/* The FXT reader's state, shared by its framing (fxt_reader.c) and its record decoders
 * (fxt_records.c). Private to ref/stream. */
#ifndef REF_STREAM_FXT_READER_IMPL_H
#define REF_STREAM_FXT_READER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pecs/stream/fxt_format.h"
#include "pecs/stream/fxt_reader.h"

/* The tables can hold whatever the format can index, but are filled in only as far as
 * the stream uses them: a reader that sees a few strings and no split records costs a
 * few KiB, not the ~0.55 MiB the full tables take (which made a reader per stream, and
 * so fuzzing, slow). */
#define PEND_CAP (REF_FXT_MAX_WORDS * REF_FXT_WORD)
#define PEND_MIN 256u
#define NR_STRINGS 0x8000u /* a string record's index is 15 bits */
/* Strings live in pages allocated on first use, so a stray high index costs one page. */
#define STRING_PAGE 256u
#define NR_STRING_PAGES (NR_STRINGS / STRING_PAGE)
#define NR_THREADS 0x100u  /* a thread record's index is 8 bits */
/* Text of table strings is kept while it fits; later strings stay defined (so refs to
 * them are valid) but resolve to no text. Names only feed the observer. */
#define ARENA_CAP (256u * 1024u)
#define ARENA_MIN 1024u

struct string_slot {
	uint32_t off;
	uint16_t len;
	uint8_t defined;
	uint8_t has_text;
};

/* A thread record's koids and their Linux ids, looked up when the record comes (the
 * map is fixed for the reader's life), so a backtrace naming the slot looks up
 * nothing. */
struct thread_slot {
	uint64_t pkoid, tkoid;
	uint32_t pid, tid;
	bool defined;
	bool mapped; /* both koids are in the map */
};

/* Koids a backtrace carried inline, and what the map said of each: a direct-mapped
 * memo, so the usual few threads cost one load and compare each rather than a scan
 * of the map. A collision only costs the scan. */
#define KOID_MEMO 64u
struct koid_memo {
	uint64_t koid;
	uint32_t id;
	uint8_t state; /* KOID_EMPTY, KOID_MAPPED, KOID_UNMAPPED */
};
enum { KOID_EMPTY, KOID_MAPPED, KOID_UNMAPPED };

struct ref_fxt_reader {
	struct ref_stream_target target;
	struct ref_stream_observer observer;
	bool have_observer;

	uint64_t offset;    /* stream offset of the next byte pushed */
	uint64_t rec_start; /* stream offset of the record being gathered or skipped */
	uint64_t skip;      /* bytes of a passed-over record still to come */
	size_t pend_len;
	bool seen_magic;
	uint64_t ticks_per_second;

	struct ref_stream_error err;
	int err_ret;
	struct ref_stream_stats stats;

	uint64_t ips[REF_STREAM_MAX_FRAMES];
	struct thread_slot threads[NR_THREADS];
	struct koid_memo koids[KOID_MEMO];
	/* NULL pages hold no defined string. */
	struct string_slot *strings[NR_STRING_PAGES];
	size_t arena_used, arena_cap;
	char *arena;
	/* Holds the header word from the start, and a record split across pushes once one
	 * comes; pend_cap grows to that record's size. */
	size_t pend_cap;
	uint8_t *pend;

	/* A pecs.user_regs blob waiting for the backtrace it belongs to (fxt_user_regs.c);
	 * its stack bytes are copied, as the blob's may be gone when the backtrace comes. */
	bool regs_pending;
	uint32_t regs_abi, nr_regs;
	uint64_t regs[REF_FXT_USER_REGS_MAX];
	uint8_t *stack;
	size_t stack_len, stack_cap;
};

static inline uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	/* Records may sit at any alignment in a pushed chunk. */
	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* Records the error at the current record and returns what feed() returns for it. */
int ref_fxt_reader_fail(struct ref_fxt_reader *r, enum ref_stream_errc code);
/* Growing a table failed: the stream cannot be followed any further. */
int ref_fxt_reader_fail_nomem(struct ref_fxt_reader *r);
/* Doubles cap from min until it reaches need (need <= max). */
size_t ref_fxt_reader_grown(size_t cap, size_t min, size_t need, size_t max);

/* fxt_records.c: whether a record with header h is decoded (the rest are skipped by
 * size), and the decoding of one whole record of that many words. */
bool ref_fxt_reader_decodes(uint64_t h);
int ref_fxt_reader_record(struct ref_fxt_reader *r, const uint8_t *rec, size_t words);
/* Whole small records at p while there are (after the magic, nothing pending): 0 and
 * the bytes decoded in *taken, or the error of the record at p + *taken. */
int ref_fxt_reader_run(struct ref_fxt_reader *r, const uint8_t *p, size_t len, size_t *taken);

/* fxt_user_regs.c: a blob record: 0 when it was the pecs.user_regs blob (now pending),
 * 1 when it is someone else's (passed over), or the error. */
int ref_fxt_reader_blob(struct ref_fxt_reader *r, const uint8_t *rec, size_t words);
/* Gives s the pending registers and stack, if any, and clears them. */
void ref_fxt_reader_take_regs(struct ref_fxt_reader *r, struct pecs_sample *s);

#endif /* REF_STREAM_FXT_READER_IMPL_H */
