/* Readers and writers against each other and against bytes written out by hand. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pecs/stream/decoder.h"
#include "pecs/stream/fxt_reader.h"
#include "pecs/stream/fxt_writer.h"
#include "pecs/stream/markup_reader.h"
#include "pecs/stream/markup_writer.h"

struct seen {
	struct pecs_sample s[16];
	uint64_t ips[16][8];
	size_t n;
	int refuse_at; /* 1-based sample the sink refuses; 0 never */
	char kobj_names[4][32];
	uint64_t kobj_koids[4];
	size_t nr_kobj;
	char module_name[32];
	uint8_t build_id[8];
	size_t build_id_len;
	uint64_t mmap_start, mmap_range, mmap_vaddr;
	uint32_t mmap_flags, mmap_module;
};

static int sink(void *ctx, const struct pecs_sample *s)
{
	struct seen *z = ctx;

	if (z->refuse_at && (size_t)z->refuse_at == z->n + 1)
		return -ENOBUFS;
	assert_true(z->n < 16 && s->nr_ips <= 8);
	z->s[z->n] = *s;
	memcpy(z->ips[z->n], s->ips, s->nr_ips * 8);
	z->s[z->n].ips = z->ips[z->n];
	z->n++;
	return 0;
}

static void on_kobj(void *ctx, uint64_t koid, uint8_t type, const char *name, size_t len)
{
	struct seen *z = ctx;

	(void)type;
	assert_true(z->nr_kobj < 4 && len < 32);
	memcpy(z->kobj_names[z->nr_kobj], name, len);
	z->kobj_names[z->nr_kobj][len] = 0;
	z->kobj_koids[z->nr_kobj++] = koid;
}

static void on_module(void *ctx, uint64_t pkoid, uint32_t id, const char *name, size_t len,
		      const uint8_t *bid, size_t bid_len)
{
	struct seen *z = ctx;

	(void)pkoid;
	(void)id;
	memcpy(z->module_name, name, len);
	z->module_name[len] = 0;
	memcpy(z->build_id, bid, bid_len);
	z->build_id_len = bid_len;
}

static void on_mmap(void *ctx, uint64_t pkoid, uint32_t id, uint64_t start, uint64_t range,
		    uint64_t vaddr, uint32_t flags)
{
	struct seen *z = ctx;

	(void)pkoid;
	z->mmap_module = id;
	z->mmap_start = start;
	z->mmap_range = range;
	z->mmap_vaddr = vaddr;
	z->mmap_flags = flags;
}

static const struct ref_stream_observer observer = {
	.kernel_object = on_kobj,
	.module = on_module,
	.mmap = on_mmap,
};

static const struct pecs_koid_map_entry map[] = { { 1001, 42 }, { 1002, 43 } };

static struct ref_stream_target target(struct seen *z, int with_map)
{
	struct ref_stream_target t = {
		.sink = sink,
		.sink_ctx = z,
		.koids = with_map ? map : NULL,
		.nr_koids = with_map ? 2 : 0,
		.observer = &observer,
		.observer_ctx = z,
	};
	return t;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void test_fxt_writer_bytes(void **state)
{
	uint8_t b[64];
	const uint64_t ips[2] = { 0x402a964b1499, 0x4ae0293b };
	struct ref_fxt_who who = { 0, 789, 987 };

	(void)state;
	assert_int_equal(ref_fxt_write_magic(b, sizeof(b)), 8);
	assert_memory_equal(b, "\x10\x00\x04\x46\x78\x54\x16\x00", 8);
	/* The research notes' example, less the 2 it carries in reserved bits [36..63]. */
	assert_int_equal(ref_fxt_write_backtrace(b, sizeof(b), &who, 7000, ips, 2), 48);
	assert_true(le64(b) == 0x000000002002006Aull);
	assert_true(le64(b + 8) == 7000 && le64(b + 16) == 789 && le64(b + 24) == 987);
	assert_true(le64(b + 32) == ips[0] && le64(b + 40) == ips[1]);
	assert_int_equal(ref_fxt_write_init(b, sizeof(b), 1000), 16);
	assert_true(le64(b) == 0x21 && le64(b + 8) == 1000);
	assert_int_equal(ref_fxt_write_string(b, sizeof(b), 3, "abc", 3), 16);
	assert_true(le64(b) == (0x22ull | 3ull << 16 | 3ull << 32));
	assert_memory_equal(b + 8, "abc\0\0\0\0\0", 8);

	assert_int_equal(ref_fxt_write_backtrace(b, 47, &who, 1, ips, 2), -ENOSPC);
	assert_int_equal(ref_fxt_write_init(b, sizeof(b), 0), -EINVAL);
	assert_int_equal(ref_fxt_write_string(b, sizeof(b), 0, "x", 1), -EINVAL);
	assert_int_equal(ref_fxt_write_thread(b, sizeof(b), 0, 1, 2), -EINVAL);
	assert_int_equal(ref_fxt_write_backtrace(b, sizeof(b), &who, 1, ips, 256), -EINVAL);
}

/* Writes one stream with every record kind, reads it back in one piece. */
static void test_fxt_round_trip(void **state)
{
	static uint8_t b[4096];
	struct seen z = { 0 };
	struct ref_stream_target t = target(&z, 1);
	struct ref_fxt_reader *r;
	struct ref_stream_stats st = { 0 };
	const uint64_t ips[3] = { 0x1000, 0x2000, 0x3000 };
	struct ref_fxt_who inl = { 0, 1001, 1002 }, byref = { 7, 0, 0 };
	struct ref_fxt_str by_index = { NULL, 0, 5 }, in_line = { "worker", 6, 0 };
	size_t n = 0;

	(void)state;
	n += ref_fxt_write_magic(b + n, sizeof(b) - n);
	n += ref_fxt_write_init(b + n, sizeof(b) - n, 2000000000ull);
	n += ref_fxt_write_provider_info(b + n, sizeof(b) - n, 1, "cpu", 3);
	n += ref_fxt_write_provider_section(b + n, sizeof(b) - n, 1);
	n += ref_fxt_write_provider_event(b + n, sizeof(b) - n, 1, 0);
	n += ref_fxt_write_string(b + n, sizeof(b) - n, 5, "proc-name", 9);
	n += ref_fxt_write_thread(b + n, sizeof(b) - n, 7, 1001, 1002);
	n += ref_fxt_write_kernel_object(b + n, sizeof(b) - n, 1, 1001, &by_index);
	n += ref_fxt_write_kernel_object(b + n, sizeof(b) - n, 2, 1002, &in_line);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &inl, 4000, ips, 3);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &byref, 6000, ips + 1, 1);
	n += ref_fxt_write_module(b + n, sizeof(b) - n, &byref, 7000, 1, "libx.so", 7,
				  (const uint8_t *)"\x01\x23\xca\xfe", 4);
	n += ref_fxt_write_mmap(b + n, sizeof(b) - n, &inl, 7000, 1, 5, 0x400000, 0x3000, 0x1000);

	assert_int_equal(ref_fxt_reader_new(&r, &t), 0);
	assert_int_equal(ref_fxt_reader_feed(r, b, n), 0);
	assert_int_equal(ref_fxt_reader_finish(r), 0);
	ref_fxt_reader_stats(r, &st);
	ref_fxt_reader_free(r);

	assert_int_equal(z.n, 2);
	assert_int_equal(z.s[0].pid, 42);
	assert_int_equal(z.s[0].tid, 43);
	assert_int_equal(z.s[0].time, 2000); /* 4000 ticks at 2 GHz */
	assert_int_equal(z.s[0].misc, PECS_MISC_USER);
	assert_int_equal(z.s[0].nr_ips, 3);
	assert_memory_equal(z.s[0].ips, ips, 24);
	assert_int_equal(z.s[1].time, 3000);
	assert_int_equal(z.s[1].nr_ips, 1);
	assert_true(z.s[1].ips[0] == 0x2000);
	assert_int_equal(z.nr_kobj, 2);
	assert_string_equal(z.kobj_names[0], "proc-name");
	assert_string_equal(z.kobj_names[1], "worker");
	assert_string_equal(z.module_name, "libx.so");
	assert_int_equal(z.build_id_len, 4);
	assert_memory_equal(z.build_id, "\x01\x23\xca\xfe", 4);
	assert_true(z.mmap_start == 0x400000 && z.mmap_range == 0x3000 && z.mmap_vaddr == 0x1000);
	assert_int_equal(z.mmap_flags, 5);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.records, 13);
	assert_int_equal(st.bytes, n);
}

static void test_fxt_unmapped_and_sticky(void **state)
{
	uint8_t b[256];
	struct seen z = { 0 };
	struct ref_stream_target t = target(&z, 1);
	struct ref_fxt_reader *r;
	struct ref_stream_stats st = { 0 };
	struct ref_stream_error e;
	const uint64_t ip = 0x12345678;
	struct ref_fxt_who good = { 0, 1001, 1002 }, bad = { 0, 9999, 9998 };
	size_t n = 0;

	(void)state;
	n += ref_fxt_write_magic(b + n, sizeof(b) - n);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &bad, 1, &ip, 1);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &good, 2, &ip, 1);
	memset(b + n, 0, 8); /* size-0 header */
	n += 8;
	assert_int_equal(ref_fxt_reader_new(&r, &t), 0);
	assert_int_equal(ref_fxt_reader_feed(r, b, n), -EBADMSG);
	ref_fxt_reader_error(r, &e);
	assert_int_equal(e.code, REF_FXT_E_ZERO_SIZE);
	assert_int_equal(e.offset, n - 8);
	/* Sticky: more good bytes change nothing. */
	assert_int_equal(ref_fxt_reader_feed(r, b + 8, 24), -EBADMSG);
	assert_int_equal(ref_fxt_reader_finish(r), -EBADMSG);
	ref_fxt_reader_stats(r, &st);
	ref_fxt_reader_free(r);
	assert_int_equal(z.n, 1);
	assert_int_equal(st.dropped_unmapped, 1);
	assert_string_equal(ref_stream_errc_name(e.code), "FXT_ZERO_SIZE");
}

/* The reader remembers what the map said of a thread record's koids and of koids seen
 * inline: a thread slot bound again, and koids that share a memo slot (600 koids, 64
 * slots), must still map as ref_stream_map_koid() says. */
struct expect {
	uint32_t pid[4096], tid[4096];
	size_t want, got;
};

static int expect_sink(void *ctx, const struct pecs_sample *s)
{
	struct expect *x = ctx;

	assert_true(x->got < x->want);
	assert_int_equal(s->pid, x->pid[x->got]);
	assert_int_equal(s->tid, x->tid[x->got]);
	x->got++;
	return 0;
}

static void test_fxt_koids_rebound(void **state)
{
	static uint8_t b[1 << 20];
	static struct expect x;
	static struct pecs_koid_map_entry m[300];
	struct ref_stream_target t = { .sink = expect_sink, .sink_ctx = &x,
				       .koids = m, .nr_koids = 300 };
	struct ref_stream_stats st = { 0 };
	uint64_t slot_p[8] = { 0 }, slot_t[8] = { 0 }, dropped = 0, rng = 12345;
	const uint64_t ip = 0x1000;
	struct ref_fxt_reader *r;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < 300; i++)
		m[i] = (struct pecs_koid_map_entry){ 5000 + 2 * i, (uint32_t)(300 + i) };
	n += ref_fxt_write_magic(b + n, sizeof(b) - n);
	memset(&x, 0, sizeof(x));
	while (x.want < 2048) {
		struct ref_fxt_who who = { 0, 0, 0 };
		uint32_t pid, tid;
		uint8_t slot;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		slot = (uint8_t)(1 + (rng >> 60) % 7);
		who.pkoid = 5000 + (rng >> 20) % 600; /* odd koids are not in the map */
		who.tkoid = 5000 + (rng >> 40) % 600;
		if ((rng >> 33) % 4 == 0) {
			/* Bind (or bind again) a slot; its next backtraces use these koids. */
			n += ref_fxt_write_thread(b + n, sizeof(b) - n, slot, who.pkoid, who.tkoid);
			slot_p[slot] = who.pkoid;
			slot_t[slot] = who.tkoid;
			continue;
		}
		if ((rng >> 35) % 2 && slot_p[slot]) {
			who.thread_ref = slot;
			who.pkoid = slot_p[slot];
			who.tkoid = slot_t[slot];
		}
		if (ref_stream_map_koid(&t, who.pkoid, &pid) ||
		    ref_stream_map_koid(&t, who.tkoid, &tid)) {
			dropped++;
		} else {
			x.pid[x.want] = pid;
			x.tid[x.want] = tid;
			x.want++;
		}
		if (who.thread_ref)
			who.pkoid = who.tkoid = 0;
		n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &who, 1, &ip, 1);
		assert_true(n < sizeof(b) - 64);
	}
	assert_true(dropped > 1000);
	assert_int_equal(ref_fxt_reader_new(&r, &t), 0);
	assert_int_equal(ref_fxt_reader_feed(r, b, n), 0);
	assert_int_equal(ref_fxt_reader_finish(r), 0);
	ref_fxt_reader_stats(r, &st);
	ref_fxt_reader_free(r);
	assert_int_equal(x.got, x.want);
	assert_int_equal(st.dropped_unmapped, dropped);
}

/* Fuchsia's parser warns on these and goes on; so does pecs, counting them. */
static void test_fxt_warnings_not_errors(void **state)
{
	uint8_t b[256];
	struct seen z = { 0 };
	struct ref_stream_target t = target(&z, 0);
	struct ref_fxt_reader *r;
	struct ref_stream_stats st = { 0 };
	struct ref_fxt_str undefined = { NULL, 0, 77 };
	struct ref_fxt_who by_undefined_ref = { 9, 0, 0 }, inl = { 0, 5, 6 };
	const uint64_t ip = 0x1234;
	size_t n = 0;

	(void)state;
	n += ref_fxt_write_magic(b + n, sizeof(b) - n);
	n += ref_fxt_write_kernel_object(b + n, sizeof(b) - n, 1, 5, &undefined);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &by_undefined_ref, 1, &ip, 1);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &inl, 2, &ip, 1);
	assert_int_equal(ref_fxt_reader_new(&r, &t), 0);
	assert_int_equal(ref_fxt_reader_feed(r, b, n), 0);
	assert_int_equal(ref_fxt_reader_finish(r), 0);
	ref_fxt_reader_stats(r, &st);
	ref_fxt_reader_free(r);
	assert_int_equal(st.warnings, 2);
	assert_int_equal(st.dropped_unmapped, 1); /* u64::MAX koids are no Linux id */
	assert_int_equal(z.n, 1);
	assert_int_equal(z.s[0].pid, 5);
	assert_int_equal(z.nr_kobj, 1);
	assert_string_equal(z.kobj_names[0], "");
}

static int count_frames(void *ctx, const struct pecs_sample *s)
{
	uint64_t *frames = ctx;

	/* The last frame is read too, so a short copy into a grown buffer shows. */
	assert_true(s->ips[s->nr_ips - 1] == 0xf000 + s->nr_ips - 1);
	*frames += s->nr_ips;
	return 0;
}

/* The reader's tables start small and grow on use: the highest string index, an empty
 * string, and a record split across 1-byte pushes that is larger than the first
 * gathering buffer must read as they did with tables sized for the format's limits. */
static void test_fxt_tables_grow(void **state)
{
	static uint8_t b[8192];
	static uint64_t ips[REF_STREAM_MAX_FRAMES];
	struct seen z = { 0 };
	uint64_t frames = 0;
	struct ref_stream_target t = target(&z, 0);
	struct ref_fxt_reader *r;
	struct ref_stream_stats st = { 0 };
	struct ref_fxt_str top = { NULL, 0, 0x7fff }, empty = { NULL, 0, 3 },
			   unset = { NULL, 0, 0x7ffe };
	struct ref_fxt_who inl = { 0, 5, 6 };
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < REF_STREAM_MAX_FRAMES; i++)
		ips[i] = 0xf000 + i;
	t.sink = count_frames;
	t.sink_ctx = &frames;
	n += ref_fxt_write_magic(b + n, sizeof(b) - n);
	n += ref_fxt_write_string(b + n, sizeof(b) - n, 0x7fff, "highest", 7);
	n += ref_fxt_write_string(b + n, sizeof(b) - n, 3, "", 0);
	n += ref_fxt_write_kernel_object(b + n, sizeof(b) - n, 1, 5, &top);
	n += ref_fxt_write_kernel_object(b + n, sizeof(b) - n, 1, 6, &empty);
	n += ref_fxt_write_kernel_object(b + n, sizeof(b) - n, 1, 7, &unset);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &inl, 1, ips, REF_STREAM_MAX_FRAMES);
	n += ref_fxt_write_backtrace(b + n, sizeof(b) - n, &inl, 2, ips, 3);
	assert_int_equal(ref_fxt_reader_new(&r, &t), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ref_fxt_reader_feed(r, b + i, 1), 0);
	assert_int_equal(ref_fxt_reader_finish(r), 0);
	ref_fxt_reader_stats(r, &st);
	ref_fxt_reader_free(r);
	assert_int_equal(frames, REF_STREAM_MAX_FRAMES + 3);
	assert_int_equal(st.samples, 2);
	assert_int_equal(st.warnings, 1); /* index 0x7ffe: inside the grown table, unset */
	assert_int_equal(z.nr_kobj, 3);
	assert_string_equal(z.kobj_names[0], "highest");
	assert_string_equal(z.kobj_names[1], "");
	assert_string_equal(z.kobj_names[2], "");
}

static void test_sink_error_propagates(void **state)
{
	char text[256];
	struct seen z = { .refuse_at = 2 };
	struct ref_stream_target t = target(&z, 0);
	struct ref_markup_reader *r;
	struct ref_stream_error e;
	const uint64_t ips[1] = { 0x10 };
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 3; i++)
		n += ref_markup_write_sample(text + n, sizeof(text) - n, 5, 6, ips, 1);
	assert_int_equal(ref_markup_reader_new(&r, &t), 0);
	assert_int_equal(ref_markup_reader_feed(r, text, n), -ENOBUFS);
	ref_markup_reader_error(r, &e);
	assert_int_equal(e.code, REF_STREAM_E_SINK);
	assert_int_equal(ref_markup_reader_finish(r), -ENOBUFS);
	ref_markup_reader_free(r);
	assert_int_equal(z.n, 1);
}

static void test_markup_writer_text(void **state)
{
	char b[256];
	const uint64_t ips[2] = { 0x401000, 0xabc };
	ssize_t n;

	(void)state;
	n = ref_markup_write_sample(b, sizeof(b), 1001, 1002, ips, 2);
	assert_int_equal(n, strlen("1001\n1002\n{{{bt:0:0x401000:pc}}}\n{{{bt:1:0xabc:ra}}}\n"));
	assert_memory_equal(b, "1001\n1002\n{{{bt:0:0x401000:pc}}}\n{{{bt:1:0xabc:ra}}}\n", n);
	n = ref_markup_write_mmap(b, sizeof(b), 0x3000, 0x3000, 1, 5, 0x2000);
	assert_memory_equal(b, "{{{mmap:0x3000:0x3000:load:1:rx:0x2000}}}\n", n);
	n = ref_markup_write_module(b, sizeof(b), 1, "test_module.so",
				    (const uint8_t *)"\x01\x23\xca\xfe", 4);
	assert_memory_equal(b, "{{{module:1:test_module.so:elf:0123cafe}}}\n", n);
	n = ref_markup_write_frame(b, sizeof(b), 3, 0, REF_MARKUP_FRAME_BARE);
	assert_memory_equal(b, "{{{bt:3:0x0}}}\n", n);
	assert_int_equal(ref_markup_write_reset(b, 11), -ENOSPC);
	assert_int_equal(ref_markup_write_reset(b, 12), 12);
}

/* Markup written by the writer, read back at every chunk size. */
static void test_markup_round_trip_chunked(void **state)
{
	char text[1024];
	size_t n = 0;
	const uint64_t a[3] = { 0x401000, 0x402000, 0x403000 }, c[1] = { 0xffffffffffffffff };

	(void)state;
	n += ref_markup_write_reset(text + n, sizeof(text) - n);
	n += ref_markup_write_module(text + n, sizeof(text) - n, 1, "m.so",
				     (const uint8_t *)"\xaa", 1);
	n += ref_markup_write_mmap(text + n, sizeof(text) - n, 0x400000, 0x4000, 1, 5, 0);
	n += ref_markup_write_sample(text + n, sizeof(text) - n, 1001, 1002, a, 3);
	n += ref_markup_write_sample(text + n, sizeof(text) - n, 1001, 1002, c, 1);
	n += ref_markup_write_sample(text + n, sizeof(text) - n, 77, 1002, c, 1);
	for (size_t chunk = 1; chunk <= n; chunk++) {
		struct seen z = { 0 };
		struct ref_stream_target t = target(&z, 1);
		struct ref_stream_stats st = { 0 };
		struct ref_markup_reader *r;

		assert_int_equal(ref_markup_reader_new(&r, &t), 0);
		for (size_t off = 0; off < n; off += chunk)
			assert_int_equal(ref_markup_reader_feed(r, text + off,
								n - off < chunk ? n - off : chunk),
					 0);
		assert_int_equal(ref_markup_reader_finish(r), 0);
		ref_markup_reader_stats(r, &st);
		ref_markup_reader_free(r);
		assert_int_equal(z.n, 2);
		assert_int_equal(z.s[0].nr_ips, 3);
		assert_memory_equal(z.s[0].ips, a, 24);
		assert_true(z.s[1].ips[0] == c[0]);
		assert_int_equal(z.s[1].pid, 42);
		assert_int_equal(st.dropped_unmapped, 1);
		assert_string_equal(z.module_name, "m.so");
		assert_true(z.mmap_start == 0x400000 && z.mmap_flags == 5);
	}
}

/* The same samples through FXT and markup give the same pecs_samples (but time). */
static void test_formats_agree(void **state)
{
	uint8_t fxt[512];
	char text[512];
	size_t nf = 0, nt = 0;
	struct seen zf = { 0 }, zt = { 0 };
	struct ref_stream_target tf = target(&zf, 1), tt = target(&zt, 1);
	struct ref_stream_decoder *d;
	const uint64_t ips[4] = { 1, 2, 3, 4 };
	struct ref_fxt_who who = { 0, 1001, 1002 };

	(void)state;
	nf += ref_fxt_write_magic(fxt, sizeof(fxt));
	for (int i = 1; i <= 4; i++) {
		nf += ref_fxt_write_backtrace(fxt + nf, sizeof(fxt) - nf, &who, i, ips, i);
		nt += ref_markup_write_sample(text + nt, sizeof(text) - nt, 1001, 1002, ips, i);
	}
	assert_int_equal(ref_stream_decoder_new(&d, PECS_STREAM_DETECT, &tf), 0);
	assert_int_equal(ref_stream_decoder_feed(d, fxt, nf), 0);
	assert_int_equal(ref_stream_decoder_finish(d), 0);
	assert_int_equal(ref_stream_decoder_format(d), PECS_STREAM_FXT);
	ref_stream_decoder_free(d);
	assert_int_equal(ref_stream_decoder_new(&d, PECS_STREAM_DETECT, &tt), 0);
	assert_int_equal(ref_stream_decoder_feed(d, text, nt), 0);
	assert_int_equal(ref_stream_decoder_finish(d), 0);
	assert_int_equal(ref_stream_decoder_format(d), PECS_STREAM_MARKUP);
	ref_stream_decoder_free(d);
	assert_int_equal(zf.n, 4);
	assert_int_equal(zt.n, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(zf.s[i].pid, zt.s[i].pid);
		assert_int_equal(zf.s[i].tid, zt.s[i].tid);
		assert_int_equal(zf.s[i].nr_ips, zt.s[i].nr_ips);
		assert_memory_equal(zf.s[i].ips, zt.s[i].ips, 8 * zf.s[i].nr_ips);
	}
}

static void test_detect_and_ticks(void **state)
{
	(void)state;
	assert_int_equal(ref_stream_detect("", 0), PECS_STREAM_DETECT);
	assert_int_equal(ref_stream_detect("\x10\x00\x04", 3), PECS_STREAM_DETECT);
	assert_int_equal(ref_stream_detect("\x10\x00\x05", 3), PECS_STREAM_MARKUP);
	assert_int_equal(ref_stream_detect("\x10\x00\x04\x46\x78\x54\x16\x00\x99", 9),
			 PECS_STREAM_FXT);
	assert_int_equal(ref_stream_detect("1\n", 2), PECS_STREAM_MARKUP);
	assert_true(ref_fxt_ticks_to_ns(1ull << 60, 1ull << 32) == 268435456000000000ull);
	assert_true(ref_fxt_ticks_to_ns(10, 3) == 3333333333ull);
	assert_true(ref_fxt_ticks_to_ns(UINT64_MAX, 1) == UINT64_MAX); /* saturates */
	assert_true(ref_fxt_ticks_to_ns(12345, 1000000000ull) == 12345);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fxt_writer_bytes),
		cmocka_unit_test(test_fxt_round_trip),
		cmocka_unit_test(test_fxt_unmapped_and_sticky),
		cmocka_unit_test(test_fxt_koids_rebound),
		cmocka_unit_test(test_fxt_warnings_not_errors),
		cmocka_unit_test(test_fxt_tables_grow),
		cmocka_unit_test(test_sink_error_propagates),
		cmocka_unit_test(test_markup_writer_text),
		cmocka_unit_test(test_markup_round_trip_chunked),
		cmocka_unit_test(test_formats_agree),
		cmocka_unit_test(test_detect_and_ticks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
