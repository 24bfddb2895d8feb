#include "pecs/stream/fxt_reader.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fxt_reader_impl.h"

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
	*out = r;
	return 0;
}

void ref_fxt_reader_free(struct ref_fxt_reader *r)
{
	if (!r)
		return;
	free(r->pend);
	free(r->stack);
	for (size_t i = 0; i < NR_STRING_PAGES; i++)
		free(r->strings[i]);
	free(r->arena);
	free(r);
}

int ref_fxt_reader_fail(struct ref_fxt_reader *r, enum ref_stream_errc code)
{
	r->err.code = code;
	r->err.offset = r->rec_start;
	r->err_ret = -EBADMSG;
	return r->err_ret;
}

/* Growing a table failed: the stream cannot be followed any further. */
int ref_fxt_reader_fail_nomem(struct ref_fxt_reader *r)
{
	r->err.code = REF_STREAM_E_NOMEM;
	r->err.offset = r->rec_start;
	r->err_ret = -ENOMEM;
	return r->err_ret;
}

/* Doubles *cap from min until it reaches need (need <= max). */
size_t ref_fxt_reader_grown(size_t cap, size_t min, size_t need, size_t max)
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
	cap = ref_fxt_reader_grown(r->pend_cap, PEND_MIN, need, PEND_CAP);
	p = realloc(r->pend, cap);
	if (!p)
		return ref_fxt_reader_fail_nomem(r);
	r->pend = p;
	r->pend_cap = cap;
	return 0;
}

/* Checks a header and returns the record's total byte size, or 0 after ref_fxt_reader_fail(). */
static uint64_t record_bytes(struct ref_fxt_reader *r, uint64_t h)
{
	uint64_t words;

	if (!r->seen_magic) {
		if (h != PECS_FXT_MAGIC_WORD) {
			ref_fxt_reader_fail(r, REF_FXT_E_MISSING_MAGIC);
			return 0;
		}
		r->seen_magic = true;
	}
	words = (h & 0xf) == REF_FXT_LARGE ? ref_fxt_field(h, 4, 35) : ref_fxt_field(h, 4, 15);
	if (words == 0) {
		ref_fxt_reader_fail(r, REF_FXT_E_ZERO_SIZE);
		return 0;
	}
	return words * REF_FXT_WORD;
}

/* The whole records at *p through ref_fxt_reader_run(); *p and *len past them. */
static int run(struct ref_fxt_reader *r, const uint8_t **p, size_t *len)
{
	size_t taken;
	int ret = ref_fxt_reader_run(r, *p, *len, &taken);

	*p += taken;
	*len -= taken;
	return ret;
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
		if (r->pend_len == 0 && r->seen_magic) {
			if (run(r, &p, &len))
				return r->err_ret;
			if (!len)
				break;
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
		if (!ref_fxt_reader_decodes(h)) {
			/* The header may sit in pend or in p; either way count it consumed. */
			r->skip = total - (r->pend_len ? r->pend_len : 0);
			r->pend_len = 0;
			if (!r->skip) /* a one-word record whose header came in pieces */
				r->stats.skipped++;
			continue;
		}
		if (r->pend_len == 0 && len >= total) {
			if (ref_fxt_reader_record(r, p, total / 8))
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
			if (ref_fxt_reader_record(r, r->pend, total / 8))
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
		return ref_fxt_reader_fail(r, REF_STREAM_E_TRUNCATED);
	return 0;
}

void ref_fxt_reader_error(const struct ref_fxt_reader *r, struct ref_stream_error *err)
{
	*err = r->err;
}

void ref_fxt_reader_stats(const struct ref_fxt_reader *r, struct ref_stream_stats *stats)
{
	if (stats)
		*stats = r->stats;
}
