/* The FXT records the reader decodes: metadata, init, strings, threads, kernel objects
 * and the profiler's backtraces, modules and mmaps. */
#include <errno.h>
#include <stdlib.h>

#include "fxt_reader_impl.h"

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
			return ref_fxt_reader_fail(r, REF_FXT_E_BAD_STRING_REF);
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
			return ref_fxt_reader_fail(r, REF_FXT_E_BAD_METADATA);
		return 0;
	}
	case REF_FXT_META_PROVIDER_SECTION:
	case REF_FXT_META_PROVIDER_EVENT:
		return 0;
	case REF_FXT_META_TRACE_INFO:
		if (ref_fxt_field(h, 20, 23) == 0 &&
		    ref_fxt_field(h, 24, 55) != REF_FXT_MAGIC_VALUE)
			return ref_fxt_reader_fail(r, REF_FXT_E_BAD_MAGIC);
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
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_INIT);
	tps = le64(rec + 8);
	if (tps == 0)
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_INIT);
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
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_STRING);
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
			return ref_fxt_reader_fail_nomem(r);
	}
	s = &(*page)[index % STRING_PAGE];
	s->defined = 1;
	s->len = len;
	s->has_text = r->arena_used + len <= ARENA_CAP;
	if (s->has_text && r->arena_used + len > r->arena_cap) {
		size_t cap = ref_fxt_reader_grown(r->arena_cap, ARENA_MIN, r->arena_used + len, ARENA_CAP);
		char *a = realloc(r->arena, cap);

		if (!a)
			return ref_fxt_reader_fail_nomem(r);
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

static __attribute__((noinline)) void memo_fill(struct ref_fxt_reader *r,
						struct koid_memo *m, uint64_t koid)
{
	m->koid = koid;
	m->state = ref_stream_map_koid(&r->target, koid, &m->id) ? KOID_UNMAPPED : KOID_MAPPED;
}

/* ref_stream_map_koid() through the memo: 0 and *id, or -ENOENT. Inline, its miss
 * out of line: a hit is a few instructions, which a call doubled. */
static inline int map_koid(struct ref_fxt_reader *r, uint64_t koid, uint32_t *id)
{
	struct koid_memo *m = &r->koids[(koid * 0x9e3779b97f4a7c15ull) >> 58];

	if (__builtin_expect(m->state == KOID_EMPTY || m->koid != koid, 0))
		memo_fill(r, m, koid);
	*id = m->id;
	return m->state == KOID_MAPPED ? 0 : -ENOENT;
}

static int do_thread(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint8_t index = ref_fxt_field(le64(rec), 16, 23);
	struct thread_slot *t = &r->threads[index];

	if (index == 0 || words != 3)
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_THREAD);
	t->pkoid = le64(rec + 8);
	t->tkoid = le64(rec + 16);
	t->defined = true;
	/* A slot bound again is looked up again. */
	t->mapped = !map_koid(r, t->pkoid, &t->pid) && !map_koid(r, t->tkoid, &t->tid);
	return 0;
}

static int do_kernel_object(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);
	size_t pos = 2;
	const char *name = NULL;
	size_t name_len = 0;
	int ret;

	if (words < 2)
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_KERNEL_OBJECT);
	ret = read_str(r, rec, words, &pos, ref_fxt_field(h, 24, 39), &name, &name_len);
	if (ret)
		return ret;
	/* Arguments (count in [40..43]) follow; nothing in the pipeline reads them. */
	if (r->have_observer && r->observer.kernel_object)
		r->observer.kernel_object(r->target.observer_ctx, le64(rec + 8),
					  ref_fxt_field(h, 16, 23), name, name_len);
	return 0;
}

/* Koids for a profiler record: from the thread table, or the two words at *pos. Inline:
 * a backtrace's inline koids are then two loads. */
static inline int read_who(struct ref_fxt_reader *r, const uint8_t *rec, size_t words, size_t *pos,
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
		return ref_fxt_reader_fail(r, short_code);
	*pkoid = le64(rec + *pos * 8);
	*tkoid = le64(rec + *pos * 8 + 8);
	*pos += 2;
	return 0;
}

/* Inline in both callers: the record loop's backtraces skip the record switch and a
 * call's frame. */
static inline __attribute__((always_inline)) int
do_backtrace(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);
	uint8_t thread_ref = ref_fxt_field(h, 20, 27);
	size_t nr = ref_fxt_field(h, 28, 35);
	size_t pos = 2;
	uint32_t pid, tid;
	struct pecs_sample s;
	int ret;
	bool mapped;

	if (words != 2 + (thread_ref ? 0 : 2) + nr)
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_BACKTRACE);
	if (thread_ref && r->threads[thread_ref].defined) {
		pid = r->threads[thread_ref].pid;
		tid = r->threads[thread_ref].tid;
		mapped = r->threads[thread_ref].mapped;
	} else {
		uint64_t pkoid = 0, tkoid = 0; /* set by read_who() unless it fails */

		ret = read_who(r, rec, words, &pos, thread_ref, &pkoid, &tkoid,
			       REF_FXT_E_BAD_BACKTRACE);
		if (ret)
			return ret;
		mapped = !map_koid(r, pkoid, &pid) && !map_koid(r, tkoid, &tid);
	}
	if (!mapped) {
		r->regs_pending = false;
		r->stats.dropped_unmapped++;
		return 0;
	}
	memset(&s, 0, sizeof(s));
	s.ips = r->ips;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* The ips are already the words the sink wants: hand them over where they lie
	 * when they are aligned (a record split across pushes is too, in pend). */
	if (((uintptr_t)rec & 7) == 0)
		s.ips = (const uint64_t *)(const void *)(rec + pos * 8);
	else
#endif
		for (size_t i = 0; i < nr; i++)
			r->ips[i] = le64(rec + (pos + i) * 8);
	s.size = sizeof(s);
	s.pid = pid;
	s.tid = tid;
	/* Nanosecond ticks (the default) need no call. */
	s.time = r->ticks_per_second == 1000000000ull
			 ? le64(rec + 8)
			 : ref_fxt_ticks_to_ns(le64(rec + 8), r->ticks_per_second);
	s.misc = PECS_MISC_USER;
	s.nr_ips = nr;
	if (__builtin_expect(r->regs_pending, 0))
		ref_fxt_reader_take_regs(r, &s);
	ret = r->target.sink(r->target.sink_ctx, &s);
	if (ret < 0) {
		ref_fxt_reader_fail(r, REF_STREAM_E_SINK);
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
	uint64_t pkoid = 0, tkoid = 0; /* set by read_who() unless it fails */
	int ret;

	if (words < 2)
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_MODULE);
	ret = read_who(r, rec, words, &pos, ref_fxt_field(h, 20, 27), &pkoid, &tkoid,
		       REF_FXT_E_BAD_MODULE);
	if (ret)
		return ret;
	/* Exactly the payload, as Fuchsia's parser requires (all_consuming). */
	if (pos + (name_len + 7) / 8 + (id_len + 7) / 8 != words)
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_MODULE);
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
	uint64_t pkoid = 0, tkoid = 0; /* set by read_who() unless it fails */
	int ret;

	if (words < 2)
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_MMAP);
	ret = read_who(r, rec, words, &pos, ref_fxt_field(h, 20, 27), &pkoid, &tkoid,
		       REF_FXT_E_BAD_MMAP);
	if (ret)
		return ret;
	if (pos + 3 != words)
		return ref_fxt_reader_fail(r, REF_FXT_E_BAD_MMAP);
	if (r->have_observer && r->observer.mmap)
		r->observer.mmap(r->target.observer_ctx, pkoid, ref_fxt_field(h, 28, 43),
				 le64(rec + pos * 8), le64(rec + pos * 8 + 8),
				 le64(rec + pos * 8 + 16), ref_fxt_field(h, 44, 46));
	return 0;
}

int ref_fxt_reader_record(struct ref_fxt_reader *r, const uint8_t *rec, size_t words)
{
	uint64_t h = le64(rec);
	int ret = 0;

	/* The registers belong to the record right after them, a backtrace, or to none. */
	if ((h & 0xf) != REF_FXT_BLOB && ((h & 0xf) != REF_FXT_PROFILER ||
					    ref_fxt_field(h, 16, 19) != REF_FXT_PROF_BACKTRACE))
		r->regs_pending = false;
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
	case REF_FXT_BLOB:
		ret = ref_fxt_reader_blob(r, rec, words);
		if (ret == 1) {
			r->stats.skipped++;
			return 0;
		}
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

/* The usual push: whole records one after another. Each is decoded where it lies, with
 * the framing's checks that can fail left to ref_fxt_reader_feed() (which also takes a
 * record this stops at). Returns 0 and the bytes taken in *taken, or the error. */
int ref_fxt_reader_run(struct ref_fxt_reader *r, const uint8_t *p, size_t len, size_t *taken)
{
	size_t done = 0;

	while (len - done >= REF_FXT_WORD) {
		uint64_t h = le64(p + done);
		size_t total;

		/* A large record (or a zero size) goes the general way. */
		if ((h & 0xf) == REF_FXT_LARGE)
			break;
		total = ref_fxt_field(h, 4, 15) * REF_FXT_WORD;
		if (!total || total > len - done || !ref_fxt_reader_decodes(h))
			break;
		r->rec_start = r->offset;
		if ((h & 0xf) == REF_FXT_PROFILER &&
		    ref_fxt_field(h, 16, 19) == REF_FXT_PROF_BACKTRACE) {
			if (do_backtrace(r, p + done, total / 8)) {
				*taken = done;
				return r->err_ret;
			}
			r->stats.records++;
		} else if (ref_fxt_reader_record(r, p + done, total / 8)) {
			*taken = done;
			return r->err_ret;
		}
		done += total;
		r->offset += total;
		r->stats.bytes += total;
	}
	*taken = done;
	return 0;
}

/* Whether ref_fxt_reader_record() needs the record's bytes; the rest are skipped by size. */
bool ref_fxt_reader_decodes(uint64_t h)
{
	switch (h & 0xf) {
	case REF_FXT_METADATA:
	case REF_FXT_INIT:
	case REF_FXT_STRING:
	case REF_FXT_THREAD:
	case REF_FXT_KERNEL_OBJECT:
	case REF_FXT_BLOB:
		return true;
	case REF_FXT_PROFILER:
		return ref_fxt_field(h, 16, 19) <= REF_FXT_PROF_BACKTRACE;
	default:
		return false;
	}
}
