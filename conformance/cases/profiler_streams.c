/* Profiler streams written in the case from the formats' own layouts, for behaviours the
 * vector files do not isolate: the Fuchsia unit test's example, streams too short to
 * hold anything, set_profiler on an event that does not sample, koid mapping, and the
 * two ways the Starnix seed lost markup samples (one sample per 4096-byte read, lines
 * split across reads dropped).
 *
 * FXT words follow Fuchsia docs/reference/tracing/trace-format.md (fxt-spec): header
 * [0..3] type, [4..15] size in words; profiler record type 10, subtype [16..19] (2 =
 * backtrace), thread ref [20..27] (0 = koids inline), frame count [28..35]; body ticks,
 * process koid, thread koid, ips. Markup lines follow LLVM SymbolizerMarkupFormat.rst
 * (symbolizer-markup-spec) in the shape Fuchsia's profiler writes: pid line, tid line,
 * {{{bt:N:0xADDR:pc|ra}}} frames. The expected records follow Linux's
 * perf_output_sample() field order (IP, TID, TIME, CALLCHAIN as [PERF_CONTEXT_USER,
 * ips...]), misc PERF_RECORD_MISC_USER.
 */
#include <stdio.h>
#include <string.h>

#include "pecs/toolkit/profiler.h"
#include "pecs/toolkit/wait.h"

#define FXT_PROFILER 10ull
#define FXT_BACKTRACE 2ull

#define RING_CAP 32768
#define TEXT_CAP 16384

static uint8_t ring_buf[RING_CAP];
static uint8_t want_buf[RING_CAP];
static char text[TEXT_CAP];
static char diff[256];

/* ---- building streams and records ------------------------------------------------- */

struct fxt {
	uint64_t w[64];
	size_t n;
};

static void fxt_word(struct fxt *f, uint64_t w)
{
	if (f->n < sizeof(f->w) / sizeof(f->w[0]))
		f->w[f->n++] = w;
}

/* A backtrace with its koids inline (thread ref 0). */
static void fxt_backtrace(struct fxt *f, uint64_t ticks, uint64_t pkoid, uint64_t tkoid,
			  const uint64_t *ips, unsigned int nr)
{
	uint64_t words = 4 + nr;

	fxt_word(f, FXT_PROFILER | words << 4 | FXT_BACKTRACE << 16 | 0ull << 20 |
			    (uint64_t)nr << 28);
	fxt_word(f, ticks);
	fxt_word(f, pkoid);
	fxt_word(f, tkoid);
	for (unsigned int i = 0; i < nr; i++)
		fxt_word(f, ips[i]);
}

/* One PERF_RECORD_SAMPLE for the sample_type subset IP|TID|TIME|CALLCHAIN. */
static size_t sample_record(uint8_t *buf, uint64_t st, uint32_t pid, uint32_t tid,
			    uint64_t time, const uint64_t *ips, unsigned int nr)
{
	uint64_t w[300];
	size_t n = 1;
	struct pecs_record_header h = {PECS_RECORD_SAMPLE, PECS_MISC_USER, 0};

	if (st & PECS_SAMPLE_IP)
		w[n++] = ips[0];
	if (st & PECS_SAMPLE_TID)
		w[n++] = (uint64_t)tid << 32 | pid;
	if (st & PECS_SAMPLE_TIME)
		w[n++] = time;
	if (st & PECS_SAMPLE_CALLCHAIN) {
		w[n++] = nr + 1;
		w[n++] = PECS_CONTEXT_USER;
		for (unsigned int i = 0; i < nr; i++)
			w[n++] = ips[i];
	}
	h.size = (uint16_t)(n * 8);
	memcpy(&w[0], &h, sizeof(h));
	memcpy(buf, w, n * 8);
	return n * 8;
}

/* ---- running one replay ----------------------------------------------------------- */

/* Replay and compare with want[0..want_len): UNSUPPORTED without set_profiler, FAIL on
 * any other difference. */
static void replay_expect(struct pecs_t *t, const char *what, struct pecs_replay *r,
			  const uint8_t *want, size_t want_len)
{
	struct pecs_replay_out out = {.ring = ring_buf, .cap = sizeof(ring_buf)};
	int err;

	r->expect_len = want_len;
	err = pecs_replay_run(t, r, &out);
	if (err == -ENOSYS && strcmp(out.step, "set_profiler") == 0)
		PECS_UNSUPPORTED(t, "the implementation has no set_profiler entry");
	PECS_CHECK_OK(t, err, "%s, chunk %zu: %s", what, r->chunk, out.step);
	if (out.head != want_len || memcmp(ring_buf, want, want_len) != 0)
		PECS_FAIL(t, "%s, chunk %zu: ring holds %llu bytes, want %zu; %s", what, r->chunk,
			  (unsigned long long)out.head, want_len,
			  pecs_replay_diff(ring_buf, out.head < sizeof(ring_buf) ? out.head
										: sizeof(ring_buf),
					   want, want_len, diff, sizeof(diff)));
}

static void replay_chunks(struct pecs_t *t, const char *what, struct pecs_replay *r,
			  const size_t *chunks, size_t nr_chunks, const uint8_t *want,
			  size_t want_len)
{
	for (size_t i = 0; i < nr_chunks; i++) {
		r->chunk = chunks[i] ? chunks[i] : r->len;
		replay_expect(t, what, r, want, want_len);
	}
}

/* ---- cases ------------------------------------------------------------------------ */

/* Fuchsia's Starnix perf unit test: magic, BT(ticks 1000, koids 1001/1002,
 * [0x12345678]), BT(2000, 9999/9998, [0x87654321]); koids 1001/1002 are Linux 42/43 and
 * sample_type IP|TID. Exactly one 24-byte record: type 9, misc 2, ip 0x12345678, pid 42,
 * tid 43; the second sample's koids are unmapped and it is dropped. fxt#26 is the same
 * example as a vector; this case writes it from the bit layout instead. */
PECS_CASE("Required.Profiler.Fxt.FuchsiaUnitTestExample",
	  "profiler.replay,mmap", "FXT-BACKTRACE,FXT-MAGIC-REQUIRED,STREAM-KOID-MAP")
{
	static const struct pecs_koid_map_entry map[] = {{1001, 42}, {1002, 43}};
	static const uint64_t ip1 = 0x12345678, ip2 = 0x87654321;
	static const size_t chunks[] = {0, 1, 8, 13};
	static const uint8_t want[24] = {
		9, 0, 0, 0, 2, 0, 24, 0,                            /* type u32, misc u16, size u16 */
		0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0,                 /* ip */
		42, 0, 0, 0, 43, 0, 0, 0,                           /* pid, tid */
	};
	struct fxt f = {.n = 0};
	struct pecs_replay r;

	fxt_word(&f, PECS_FXT_MAGIC_WORD);
	fxt_backtrace(&f, 1000, 1001, 1002, &ip1, 1);
	fxt_backtrace(&f, 2000, 9999, 9998, &ip2, 1);
	memset(&r, 0, sizeof(r));
	r.sample_type = PECS_SAMPLE_IP | PECS_SAMPLE_TID;
	r.format = PECS_STREAM_FXT;
	r.data = (const uint8_t *)f.w;
	r.len = f.n * 8;
	r.koids = map;
	r.nr_koids = 2;
	replay_chunks(t, "Fuchsia example", &r, chunks, 4, want, sizeof(want));
	r.format = PECS_STREAM_DETECT;
	replay_chunks(t, "Fuchsia example, format detected", &r, chunks, 4, want, sizeof(want));
}

/* Nothing to decode is not an error: an empty stream, a stream ending inside the magic
 * word, and markup shorter than 8 bytes with no frames leave the ring empty, and
 * ENABLE/DISABLE succeed, under every format selection that applies. */
PECS_CASE("Required.Profiler.Stream.EmptyOrShortNoRecords",
	  "profiler.replay,mmap", "STREAM-DETECT,FXT-SIZE-PAST-END,MARKUP-BLOCK,PROF-DISABLE-DRAIN")
{
	static const uint8_t empty[1] = {0};
	static const char pid_only[] = "1001\n";
	static const char no_frames[] = "42\n43\n";
	static const char half_line[] = "42\n43";
	static const struct {
		const char *what;
		const uint8_t *data;
		size_t len;
		int fxt, markup; /* which named formats apply (detection always does) */
	} streams[] = {
		{"empty stream", empty, 0, 1, 1},
		{"3 bytes of the magic word", pecs_fxt_magic, 3, 1, 0},
		{"7 bytes of the magic word", pecs_fxt_magic, 7, 1, 0},
		{"a pid line alone", (const uint8_t *)pid_only, sizeof(pid_only) - 1, 0, 1},
		{"pid and tid without frames", (const uint8_t *)no_frames, sizeof(no_frames) - 1, 1, 1},
		{"an unterminated tid line", (const uint8_t *)half_line, sizeof(half_line) - 1, 0, 1},
	};
	static const size_t chunks[] = {0, 1, 3};
	static const struct pecs_koid_map_entry map[] = {{42, 42}, {43, 43}, {1001, 42}};
	char what[96];

	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		static const enum pecs_stream_format formats[] = {PECS_STREAM_DETECT, PECS_STREAM_FXT,
								  PECS_STREAM_MARKUP};
		for (size_t k = 0; k < 3; k++) {
			struct pecs_replay r;

			if ((formats[k] == PECS_STREAM_FXT && !streams[i].fxt) ||
			    (formats[k] == PECS_STREAM_MARKUP && !streams[i].markup))
				continue;
			memset(&r, 0, sizeof(r));
			r.sample_type = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CALLCHAIN;
			r.format = formats[k];
			r.data = streams[i].data;
			r.len = streams[i].len;
			r.koids = map;
			r.nr_koids = 3;
			snprintf(what, sizeof(what), "%s, format %d", streams[i].what, (int)formats[k]);
			replay_chunks(t, what, &r, chunks, streams[i].len ? 3 : 1, want_buf, 0);
		}
	}
}

/* set_profiler belongs to sampling events: a counting event has no profiler session to
 * install a stream into, so the call fails, and the event keeps counting as before. */
PECS_CASE("Required.Profiler.SetProfiler.CountingEventRefused",
	  "profiler.replay,counting", "PROF-REPLAY,PROF-REPLAY-SAMPLING-ONLY")
{
	struct pecs_profiler_stream st = {
		.size = sizeof(st), .format = PECS_STREAM_FXT, .data = pecs_fxt_magic,
		.len = sizeof(pecs_fxt_magic),
	};
	struct pecs_attr a;
	uint64_t value = 0;
	int fd, ret;

	if (!PECS_IMPL_HAS(pecs_impl_of(t), set_profiler))
		PECS_UNSUPPORTED(t, "the implementation has no set_profiler entry");
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
	ret = pecs_set_profiler(t, fd, &st);
	PECS_CHECK(t, ret < 0, "set_profiler on a counting event returned %s, expected an error",
		   pecs_retname(ret));
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0));
	pecs_burn_user(2000000);
	PECS_CHECK_OK(t, pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0));
	PECS_CHECK_EQ(t, pecs_read(t, fd, &value, sizeof(value)), sizeof(value));
	PECS_CHECK(t, value > 0, "the counting event counted nothing after the refused call");
}

/* A sample whose process or thread koid is not in the map has no Linux pid/tid to name
 * and is dropped; the mapped samples around it are delivered in order. Both formats. */
PECS_CASE("Required.Profiler.KoidMap.UnmappedSamplesDropped",
	  "profiler.replay,mmap", "STREAM-KOID-MAP,FXT-BACKTRACE,MARKUP-BLOCK")
{
	static const struct pecs_koid_map_entry map[] = {{1001, 42}, {1002, 43}, {1003, 44}};
	static const struct {
		uint64_t pkoid, tkoid;
		int kept;
	} s[] = {
		{1001, 1002, 1}, {1001, 7777, 0}, {8888, 1002, 0}, {1001, 1003, 1}, {8888, 7777, 0},
		{1001, 1002, 1},
	};
	static const size_t chunks[] = {0, 1, 5};
	const uint64_t st_fxt = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_TIME;
	const uint64_t st_markup = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CALLCHAIN;
	struct fxt f = {.n = 0};
	struct pecs_replay r;
	size_t want_len = 0, tl = 0;

	/* FXT: no init record, so one tick is one ns (fxt-spec). */
	fxt_word(&f, PECS_FXT_MAGIC_WORD);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		uint64_t ip = 0x500000 + 0x10 * i, ticks = 100 * (i + 1);

		fxt_backtrace(&f, ticks, s[i].pkoid, s[i].tkoid, &ip, 1);
		if (s[i].kept)
			want_len += sample_record(want_buf + want_len, st_fxt, 42,
						  s[i].tkoid == 1002 ? 43 : 44, ticks, &ip, 1);
	}
	memset(&r, 0, sizeof(r));
	r.sample_type = st_fxt;
	r.format = PECS_STREAM_FXT;
	r.data = (const uint8_t *)f.w;
	r.len = f.n * 8;
	r.koids = map;
	r.nr_koids = 3;
	replay_chunks(t, "FXT with unmapped koids", &r, chunks, 3, want_buf, want_len);

	want_len = 0;
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		uint64_t ips[2] = {0x600000 + 0x10 * i, 0x610000 + 0x10 * i};

		tl += (size_t)snprintf(text + tl, sizeof(text) - tl,
				       "%llu\n%llu\n{{{bt:0:0x%llx:pc}}}\n{{{bt:1:0x%llx:ra}}}\n",
				       (unsigned long long)s[i].pkoid, (unsigned long long)s[i].tkoid,
				       (unsigned long long)ips[0], (unsigned long long)ips[1]);
		if (s[i].kept)
			want_len += sample_record(want_buf + want_len, st_markup, 42,
						  s[i].tkoid == 1002 ? 43 : 44, 0, ips, 2);
	}
	r.sample_type = st_markup;
	r.format = PECS_STREAM_MARKUP;
	r.data = (const uint8_t *)text;
	r.len = tl;
	replay_chunks(t, "markup with unmapped koids", &r, chunks, 3, want_buf, want_len);
}

/* One sample per pid/tid block, however the text is cut into reads: 150 blocks of one to
 * three frames (about 8 KiB of text) fed in 4096-byte reads, as the seed read its
 * socket, give exactly 150 records, not one per read. */
PECS_CASE("Required.Profiler.Markup.OneSamplePerBlock",
	  "profiler.replay,mmap", "MARKUP-BLOCK,MARKUP-LINES,STREAM-CHUNKING")
{
	static const struct pecs_koid_map_entry map[] = {{1001, 42}, {1002, 43}, {1003, 44}};
	static const size_t chunks[] = {4096, 0, 1000, 1};
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CALLCHAIN;
	const unsigned int blocks = 150;
	struct pecs_replay r;
	size_t want_len = 0, tl = 0;

	for (unsigned int b = 0; b < blocks; b++) {
		unsigned int nr = 1 + b % 3;
		uint32_t tid = b % 2 ? 44 : 43;
		uint64_t ips[3];

		tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "1001\n%u\n",
				       tid == 43 ? 1002u : 1003u);
		for (unsigned int k = 0; k < nr; k++) {
			ips[k] = 0x700000ull + 0x1000ull * b + 0x10ull * k;
			tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "{{{bt:%u:0x%llx:%s}}}\n",
					       k, (unsigned long long)ips[k], k ? "ra" : "pc");
		}
		want_len += sample_record(want_buf + want_len, st, 42, tid, 0, ips, nr);
	}
	PECS_CHECK(t, tl > 2 * 4096 && tl < sizeof(text) - 1, "text of %zu bytes", tl);
	memset(&r, 0, sizeof(r));
	r.sample_type = st;
	r.format = PECS_STREAM_MARKUP;
	r.data = (const uint8_t *)text;
	r.len = tl;
	r.koids = map;
	r.nr_koids = 3;
	replay_chunks(t, "150 markup blocks", &r, chunks, 4, want_buf, want_len);
}

/* A line cut by a read boundary is joined with its rest. Small blocks fill the first
 * read, then one block of 100 frames runs across byte 4096 with a frame line straddling
 * it; read 4096 bytes at a time, it gives one record holding all 100 frames in order. */
PECS_CASE("Required.Profiler.Markup.LineSplitAcrossReads",
	  "profiler.replay,mmap", "MARKUP-LINES,MARKUP-BLOCK,STREAM-CHUNKING")
{
	static const struct pecs_koid_map_entry map[] = {{1001, 42}, {1002, 43}};
	static const size_t chunks[] = {4096, 0};
	const uint64_t st = PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CALLCHAIN;
	const unsigned int nr = 100;
	static uint64_t ips[100];
	struct pecs_replay r;
	size_t want_len = 0, tl = 0, big_start;
	int split_line = -1;

	if (pecs_host(t)->max_stack < (int)nr + 1)
		PECS_ENV_SKIP(t, "kernel.perf_event_max_stack %d is below %u", pecs_host(t)->max_stack,
			      nr + 1);
	/* The big block is about 3300 bytes: start it so byte 4096 falls near its middle. */
	for (unsigned int b = 0; tl < 4096 - 1600; b++) {
		uint64_t ip = 0x300000ull + 0x10ull * b;

		tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "1001\n1002\n{{{bt:0:0x%llx:pc}}}\n",
				       (unsigned long long)ip);
		want_len += sample_record(want_buf + want_len, st, 42, 43, 0, &ip, 1);
	}
	big_start = tl;
	tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "1001\n1002\n");
	for (unsigned int k = 0; k < nr; k++) {
		size_t start = tl;

		ips[k] = 0x0000400000001000ull + 0x40ull * k;
		tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "{{{bt:%u:0x%016llx:%s}}}\n", k,
				       (unsigned long long)ips[k], k ? "ra" : "pc");
		if (start < 4096 && tl > 4096 && text[4095] != '\n')
			split_line = (int)k;
	}
	PECS_CHECK(t, big_start < 4096 && split_line > 0,
		   "no frame line straddles byte 4096 (block at %zu, text of %zu bytes)", big_start, tl);
	want_len += sample_record(want_buf + want_len, st, 42, 43, 0, ips, nr);
	memset(&r, 0, sizeof(r));
	r.sample_type = st;
	r.format = PECS_STREAM_MARKUP;
	r.data = (const uint8_t *)text;
	r.len = tl;
	r.koids = map;
	r.nr_koids = 2;
	replay_chunks(t, "a 100-frame block across byte 4096", &r, chunks, 2, want_buf, want_len);
}
