#include "pecs/stream/fxt_reader.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pecs/opts.h"
#include "pecs/stream/fxt_format.h"

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

struct thread_slot {
	uint64_t pkoid, tkoid;
	bool defined;
};

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
	/* NULL pages hold no defined string. */
	struct string_slot *strings[NR_STRING_PAGES];
	size_t arena_used, arena_cap;
	char *arena;
	/* Holds the header word from the start, and a record split across pushes once one
	 * comes; pend_cap grows to that record's size. */
	size_t pend_cap;
	uint8_t *pend;
};

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	/* Records may sit at any alignment in a pushed chunk. */
	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

uint64_t ref_fxt_ticks_to_ns(uint64_t ticks, uint64_t ticks_per_second)
{
	unsigned __int128 ns;

	if (ticks_per_second == 0 || ticks_per_second == 1000000000ull)
		return ticks;
	/* 128-bit product: ticks * 1e9 overflows 64 bits after ~18 s at 1 GHz. */
	ns = (unsigned __int128)ticks * 1000000000u / ticks_per_second;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

int ref_fxt_reader_new(struct ref_fxt_reader **out, const struct ref_stream_target *target)
{
	struct ref_fxt_reader *r;

	struct ref_stream_target t = { 0 };
	struct ref_stream_observer o = { 0 };
	int err = ref_stream_target_load(&t, &o, target);

	if (err || !out)
		return err ? err : -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->pend = malloc(PEND_MIN);
	if (!r->pend) {
		free(r);
		return -ENOMEM;
	}
	r->pend_cap = PEND_MIN;
	r->target = t;
	r->observer = o;
	r->have_observer = t.observer != NULL;
	r->target.observer = r->have_observer ? &r->observer : NULL;
	r->ticks_per_second = 1000000000ull;
	r->stats.size = sizeof(r->stats);
	*out = r;
	return 0;
}

void ref_fxt_reader_free(struct ref_fxt_reader *r)
{
	if (!r)
		return;
	free(r->pend);
	for (size_t i = 0; i < NR_STRING_PAGES; i++)
		free(r->strings[i]);
	free(r->arena);
	free(r);
}

static int fail(struct ref_fxt_reader *r, enum ref_stream_errc code)
{
	r->err.code = code;
	r->err.offset = r->rec_start;
	r->err_ret = -EBADMSG;
	return r->err_ret;
}

/* Growing a table failed: the stream cannot be followed any further. */
static int fail_nomem(struct ref_fxt_reader *r)
{
	r->err.code = REF_STREAM_E_NOMEM;
	r->err.offset = r->rec_start;
	r->err_ret = -ENOMEM;
	return r->err_ret;
}

/* Doubles *cap from min until it reaches need (need <= max). */
static size_t grown(size_t cap, size_t min, size_t need, size_t max)
{
	size_t n = cap ? cap : min;

	while (n < need)
		n *= 2;
	return n < max ? n : max;
}

static int pend_reserve(struct ref_fxt_reader *r, size_t need)
{
	size_t cap;
	uint8_t *p;

	if (need <= r->pend_cap)
		return 0;
	cap = grown(r->pend_cap, PEND_MIN, need, PEND_CAP);
	p = realloc(r->pend, cap);
	if (!p)
		return fail_nomem(r);
	r->pend = p;
	r->pend_cap = cap;
	return 0;
}

static const struct string_slot *string_at(const struct ref_fxt_reader *r, uint16_t index)
{
	const struct string_slot *page = r->strings[index / STRING_PAGE];

	return page && page[index % STRING_PAGE].defined ? &page[index % STRING_PAGE] : NULL;
}

/* Resolves the string ref at *pos (a word index into rec) and advances past inline text. */
static int read_str(struct ref_fxt_reader *r, const uint8_t *rec, size_t words, size_t *pos,
		    uint16_t ref, const char **text, size_t *len)
{
	const struct string_slot *s;

	if (ref == 0) {
		*text = "";
		*len = 0;
		return 0;
	}
	if (ref & REF_FXT_STRREF_INLINE) {
		size_t n = ref & ~REF_FXT_STRREF_INLINE;
		size_t w = (n + 7) / 8;

		if (*pos + w > words)
			return fail(r, REF_FXT_E_BAD_STRING_REF);
		*text = (const char *)rec + *pos * 8;
		*len = n;
		*pos += w;
		return 0;
	}
	s = string_at(r, ref);
	if (!s) {
		/* Fuchsia's parser warns (UnknownStringId) and goes on with a placeholder. */
		r->stats.warnings++;
		*text = "";
		*len = 0;
		return 0;
	}
	/* An empty text may have no arena behind it. */
	*text = s->has_text && s->len ? r->arena + s->off : "";
	*len = s->has_text ? s->len : 0;
	return 0;
}

static int do_metadata(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);

	switch (ref_fxt_field(h, 16, 19)) {
	case REF_FXT_META_PROVIDER_INFO: {
		size_t name_len = ref_fxt_field(h, 52, 59);

		if (1 + (name_len + 7) / 8 > words)
			return fail(r, REF_FXT_E_BAD_METADATA);
		return 0;
	}
	case REF_FXT_META_PROVIDER_SECTION:
	case REF_FXT_META_PROVIDER_EVENT:
		return 0;
	case REF_FXT_META_TRACE_INFO:
		if (ref_fxt_field(h, 20, 23) == 0 &&
		    ref_fxt_field(h, 24, 55) != REF_FXT_MAGIC_VALUE)
			return fail(r, REF_FXT_E_BAD_MAGIC);
		return 0;
	default:
		r->stats.skipped++;
		return 0;
	}
}

static int do_init(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t tps;

	if (words != 2)
		return fail(r, REF_FXT_E_BAD_INIT);
	tps = le64(rec + 8);
	if (tps == 0)
		return fail(r, REF_FXT_E_BAD_INIT);
	r->ticks_per_second = tps;
	return 0;
}

static int do_string(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);
	uint16_t index = ref_fxt_field(h, 16, 30);
	uint16_t len = ref_fxt_field(h, 32, 46);
	struct string_slot **page, *s;

	if (1 + (size_t)(len + 7) / 8 > words)
		return fail(r, REF_FXT_E_BAD_STRING);
	if (index == 0) {
		/* Index 0 is the empty string and cannot be defined: Fuchsia warns and
		 * ignores the record (RecordForZeroStringId). */
		r->stats.warnings++;
		return 0;
	}
	page = &r->strings[index / STRING_PAGE];
	if (!*page) {
		*page = calloc(STRING_PAGE, sizeof(**page));
		if (!*page)
			return fail_nomem(r);
	}
	s = &(*page)[index % STRING_PAGE];
	s->defined = 1;
	s->len = len;
	s->has_text = r->arena_used + len <= ARENA_CAP;
	if (s->has_text && r->arena_used + len > r->arena_cap) {
		size_t cap = grown(r->arena_cap, ARENA_MIN, r->arena_used + len, ARENA_CAP);
		char *a = realloc(r->arena, cap);

		if (!a)
			return fail_nomem(r);
		r->arena = a;
		r->arena_cap = cap;
	}
	if (s->has_text && len) {
		s->off = r->arena_used;
		memcpy(r->arena + s->off, rec + 8, len);
		r->arena_used += len;
	}
	return 0;
}

static int do_thread(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint8_t index = ref_fxt_field(le64(rec), 16, 23);

	if (index == 0 || words != 3)
		return fail(r, REF_FXT_E_BAD_THREAD);
	r->threads[index].pkoid = le64(rec + 8);
	r->threads[index].tkoid = le64(rec + 16);
	r->threads[index].defined = true;
	return 0;
}

static int do_kernel_object(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);
	size_t pos = 2;
	const char *name;
	size_t name_len;
	int ret;

	if (words < 2)
		return fail(r, REF_FXT_E_BAD_KERNEL_OBJECT);
	ret = read_str(r, rec, words, &pos, ref_fxt_field(h, 24, 39), &name, &name_len);
	if (ret)
		return ret;
	/* Arguments (count in [40..43]) follow; nothing in the pipeline reads them. */
	if (r->have_observer && r->observer.kernel_object)
		r->observer.kernel_object(r->target.observer_ctx, le64(rec + 8),
					  ref_fxt_field(h, 16, 23), name, name_len);
	return 0;
}

/* Koids for a profiler record: from the thread table, or the two words at *pos. */
static int read_who(struct ref_fxt_reader *r, const uint8_t *rec, size_t words, size_t *pos,
		    uint8_t thread_ref, uint64_t *pkoid, uint64_t *tkoid,
		    enum ref_stream_errc short_code)
{
	if (thread_ref) {
		if (!r->threads[thread_ref].defined) {
			/* As Fuchsia's resolver: a warning and koids that map to nothing. */
			r->stats.warnings++;
			*pkoid = *tkoid = UINT64_MAX;
			return 0;
		}
		*pkoid = r->threads[thread_ref].pkoid;
		*tkoid = r->threads[thread_ref].tkoid;
		return 0;
	}
	if (*pos + 2 > words)
		return fail(r, short_code);
	*pkoid = le64(rec + *pos * 8);
	*tkoid = le64(rec + *pos * 8 + 8);
	*pos += 2;
	return 0;
}

static int do_backtrace(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);
	uint8_t thread_ref = ref_fxt_field(h, 20, 27);
	size_t nr = ref_fxt_field(h, 28, 35);
	size_t pos = 2;
	uint64_t pkoid, tkoid;
	uint32_t pid, tid;
	struct pecs_sample s;
	int ret;

	if (words != 2 + (thread_ref ? 0 : 2) + nr)
		return fail(r, REF_FXT_E_BAD_BACKTRACE);
	ret = read_who(r, rec, words, &pos, thread_ref, &pkoid, &tkoid,
		       REF_FXT_E_BAD_BACKTRACE);
	if (ret)
		return ret;
	if (ref_stream_map_koid(&r->target, pkoid, &pid) ||
	    ref_stream_map_koid(&r->target, tkoid, &tid)) {
		r->stats.dropped_unmapped++;
		return 0;
	}
	for (size_t i = 0; i < nr; i++)
		r->ips[i] = le64(rec + (pos + i) * 8);

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.pid = pid;
	s.tid = tid;
	s.time = ref_fxt_ticks_to_ns(le64(rec + 8), r->ticks_per_second);
	s.misc = PECS_MISC_USER;
	s.nr_ips = nr;
	s.ips = r->ips;
	ret = r->target.sink(r->target.sink_ctx, &s);
	if (ret < 0) {
		fail(r, REF_STREAM_E_SINK);
		r->err_ret = ret;
		return ret;
	}
	r->stats.samples++;
	return 0;
}

static int do_module(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);
	size_t name_len = ref_fxt_field(h, 44, 51), id_len = ref_fxt_field(h, 52, 59);
	size_t pos = 2;
	uint64_t pkoid, tkoid;
	int ret;

	if (words < 2)
		return fail(r, REF_FXT_E_BAD_MODULE);
	ret = read_who(r, rec, words, &pos, ref_fxt_field(h, 20, 27), &pkoid, &tkoid,
		       REF_FXT_E_BAD_MODULE);
	if (ret)
		return ret;
	/* Exactly the payload, as Fuchsia's parser requires (all_consuming). */
	if (pos + (name_len + 7) / 8 + (id_len + 7) / 8 != words)
		return fail(r, REF_FXT_E_BAD_MODULE);
	if (r->have_observer && r->observer.module)
		r->observer.module(r->target.observer_ctx, pkoid, ref_fxt_field(h, 28, 43),
				   (const char *)rec + pos * 8, name_len,
				   rec + (pos + (name_len + 7) / 8) * 8, id_len);
	return 0;
}

static int do_mmap(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);
	size_t pos = 2;
	uint64_t pkoid, tkoid;
	int ret;

	if (words < 2)
		return fail(r, REF_FXT_E_BAD_MMAP);
	ret = read_who(r, rec, words, &pos, ref_fxt_field(h, 20, 27), &pkoid, &tkoid,
		       REF_FXT_E_BAD_MMAP);
	if (ret)
		return ret;
	if (pos + 3 != words)
		return fail(r, REF_FXT_E_BAD_MMAP);
	if (r->have_observer && r->observer.mmap)
		r->observer.mmap(r->target.observer_ctx, pkoid, ref_fxt_field(h, 28, 43),
				 le64(rec + pos * 8), le64(rec + pos * 8 + 8),
				 le64(rec + pos * 8 + 16), ref_fxt_field(h, 44, 46));
	return 0;
}

static int do_record(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);
	int ret = 0;

	switch (h & 0xf) {
	case REF_FXT_METADATA:
		ret = do_metadata(r, rec, words);
		break;
	case REF_FXT_INIT:
		ret = do_init(r, rec, words);
		break;
	case REF_FXT_STRING:
		ret = do_string(r, rec, words);
		break;
	case REF_FXT_THREAD:
		ret = do_thread(r, rec, words);
		break;
	case REF_FXT_KERNEL_OBJECT:
		ret = do_kernel_object(r, rec, words);
		break;
	case REF_FXT_PROFILER:
		switch (ref_fxt_field(h, 16, 19)) {
		case REF_FXT_PROF_BACKTRACE:
			ret = do_backtrace(r, rec, words);
			break;
		case REF_FXT_PROF_MODULE:
			ret = do_module(r, rec, words);
			break;
		case REF_FXT_PROF_MMAP:
			ret = do_mmap(r, rec, words);
			break;
		}
		break;
	}
	if (ret == 0)
		r->stats.records++;
	return ret;
}

/* Whether do_record() needs the record's bytes; the rest are skipped by size. */
static bool decoded(uint64_t h)
{
	switch (h & 0xf) {
	case REF_FXT_METADATA:
	case REF_FXT_INIT:
	case REF_FXT_STRING:
	case REF_FXT_THREAD:
	case REF_FXT_KERNEL_OBJECT:
		return true;
	case REF_FXT_PROFILER:
		return ref_fxt_field(h, 16, 19) <= REF_FXT_PROF_BACKTRACE;
	default:
		return false;
	}
}

/* Checks a header and returns the record's total byte size, or 0 after fail(). */
static uint64_t record_bytes(struct ref_fxt_reader *r, uint64_t h)
{
	uint64_t words;

	if (!r->seen_magic) {
		if (h != REF_FXT_MAGIC_WORD) {
			fail(r, REF_FXT_E_MISSING_MAGIC);
			return 0;
		}
		r->seen_magic = true;
	}
	words = (h & 0xf) == REF_FXT_LARGE ? ref_fxt_field(h, 4, 35) : ref_fxt_field(h, 4, 15);
	if (words == 0) {
		fail(r, REF_FXT_E_ZERO_SIZE);
		return 0;
	}
	return words * REF_FXT_WORD;
}

int ref_fxt_reader_feed(struct ref_fxt_reader *r, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (r->err.code)
		return r->err_ret;
	while (len) {
		uint64_t total, h;
		size_t take;

		if (r->skip) {
			take = r->skip < len ? r->skip : len;
			r->skip -= take;
			p += take;
			len -= take;
			r->offset += take;
			r->stats.bytes += take;
			if (!r->skip)
				r->stats.skipped++;
			continue;
		}
		if (r->pend_len == 0)
			r->rec_start = r->offset;
		/* Gather at least the header word. */
		if (r->pend_len < 8 && (r->pend_len || len < 8)) {
			take = 8 - r->pend_len < len ? 8 - r->pend_len : len;
			memcpy(r->pend + r->pend_len, p, take);
			r->pend_len += take;
			p += take;
			len -= take;
			r->offset += take;
			r->stats.bytes += take;
			if (r->pend_len < 8)
				break;
		}
		h = le64(r->pend_len ? r->pend : p);
		total = record_bytes(r, h);
		if (!total)
			return r->err_ret;
		if (!decoded(h)) {
			/* The header may sit in pend or in p; either way count it consumed. */
			r->skip = total - (r->pend_len ? r->pend_len : 0);
			r->pend_len = 0;
			if (!r->skip) /* a one-word record whose header came in pieces */
				r->stats.skipped++;
			continue;
		}
		if (r->pend_len == 0 && len >= total) {
			if (do_record(r, p, total / 8))
				return r->err_ret;
			p += total;
			len -= total;
			r->offset += total;
			r->stats.bytes += total;
			continue;
		}
		if (pend_reserve(r, total))
			return r->err_ret;
		take = total - r->pend_len < len ? total - r->pend_len : len;
		memcpy(r->pend + r->pend_len, p, take);
		r->pend_len += take;
		p += take;
		len -= take;
		r->offset += take;
		r->stats.bytes += take;
		if (r->pend_len == total) {
			r->pend_len = 0;
			if (do_record(r, r->pend, total / 8))
				return r->err_ret;
		}
	}
	return 0;
}

int ref_fxt_reader_finish(struct ref_fxt_reader *r)
{
	if (r->err.code)
		return r->err_ret;
	if (r->pend_len || r->skip)
		return fail(r, REF_STREAM_E_TRUNCATED);
	return 0;
}

void ref_fxt_reader_error(const struct ref_fxt_reader *r, struct ref_stream_error *err)
{
	*err = r->err;
}

void ref_fxt_reader_stats(const struct ref_fxt_reader *r, struct ref_stream_stats *stats)
{
	struct ref_stream_stats mine = r->stats;

	pecs_opts_store(stats, &mine, sizeof(mine),
			PECS_OPTS_SIZE_TO(ref_stream_stats, dropped_unmapped));
}
