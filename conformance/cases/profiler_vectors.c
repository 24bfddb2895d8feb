/* The profiler pipeline measured through the vtable: every FXT and markup stream vector
 * is installed with set_profiler (feature profiler.replay) on a sampling event, and the
 * ring after ENABLE/DISABLE must hold exactly the vector's PERF_RECORD_SAMPLE bytes.
 *
 * The expected bytes come from vectors/fxt/fxt_stream.json and
 * vectors/markup/markup_stream.json (sources fxt-spec, fuchsia-source,
 * symbolizer-markup-spec; generated from the formats' bit layouts by
 * harness/pecs_vectors/stream_gen.py), never from the engine under test. The kernel has
 * no profiler seam, so every case here is UNSUPPORTED on it.
 */
#include <stdio.h>
#include <string.h>

#include "pecs/vectors.h"
#include "pecs/toolkit/profiler.h"

#define KOIDS_MAX 64
#define RING_CAP 16384

static uint8_t ring_buf[RING_CAP];
static struct pecs_koid_map_entry koid_buf[KOIDS_MAX];
static char msg[1024];

/* Replay v once and compare with its expected ring: UNSUPPORTED without set_profiler,
 * FAIL on any other difference. */
static void replay_vector(struct pecs_t *t, const struct pecs_vec_stream *v, int format,
			  size_t chunk)
{
	struct pecs_replay r;
	struct pecs_replay_out out = {.ring = ring_buf, .cap = sizeof(ring_buf)};
	int err;

	pecs_replay_from_vector(&r, v, format, chunk, koid_buf, KOIDS_MAX);
	err = pecs_replay_run(t, &r, &out);
	if (err == -ENOSYS && strcmp(out.step, "set_profiler") == 0)
		PECS_UNSUPPORTED(t, "the implementation has no set_profiler entry");
	PECS_CHECK_OK(t, err, "tcId %d (%s), chunk %zu: %s", v->tc_id, v->comment, chunk,
		      out.step);
	if (pecs_replay_check_vector(v, &out, chunk, msg, sizeof(msg)) < 0)
		PECS_FAIL(t, "%s", msg);
}

/* "Whole" is one read of the entire stream; an empty stream has nothing to read. */
static size_t whole(const struct pecs_vec_stream *v)
{
	return v->stream_len;
}

static int applies(struct pecs_t *t, const struct pecs_vec_stream *v)
{
	return v->has_ring && v->ring_len <= RING_CAP && pecs_vector_fits_host(t, v);
}

static void all_vectors_whole(struct pecs_t *t, const struct pecs_vec_stream *vecs, size_t n)
{
	size_t ran = 0;

	for (size_t i = 0; i < n; i++) {
		if (!applies(t, &vecs[i]))
			continue;
		replay_vector(t, &vecs[i], -1, whole(&vecs[i]));
		ran++;
	}
	PECS_CHECK(t, ran > 0, "no vector applies to this host (max_stack %d)",
		   pecs_host(t)->max_stack);
}

PECS_CASE("Required.Profiler.Fxt.VectorsRingBytes",
	  "profiler.replay,mmap",
	  "FXT-MAGIC-REQUIRED,FXT-MAGIC-VALUE,FXT-SIZE-ZERO,FXT-SIZE-PAST-END,FXT-SKIP-UNKNOWN,"
	  "FXT-LARGE,FXT-MAX-RECORD,FXT-METADATA,FXT-INIT,FXT-STRING-TABLE,FXT-STRING-REF,"
	  "FXT-THREAD-TABLE,FXT-THREAD-REF,FXT-KOBJ,FXT-BACKTRACE,FXT-SKIP-SUBTYPE,"
	  "STREAM-KOID-MAP,PROF-REPLAY,PROF-DISABLE-DRAIN")
{
	all_vectors_whole(t, pecs_vec_fxt, pecs_vec_fxt_count);
}

PECS_CASE("Required.Profiler.Markup.VectorsRingBytes",
	  "profiler.replay,mmap",
	  "MARKUP-LINES,MARKUP-BLOCK,MARKUP-BT-GRAMMAR,MARKUP-FRAME-ORDER,MARKUP-RESET,"
	  "MARKUP-MODULE-MMAP,MARKUP-ELEMENT,MARKUP-HALF-LINE,STREAM-KOID-MAP,PROF-REPLAY,"
	  "PROF-DISABLE-DRAIN")
{
	all_vectors_whole(t, pecs_vec_markup, pecs_vec_markup_count);
}

/* Reads of 1, 3 and 7 bytes, and each chunk size the vector itself lists, must leave the
 * bytes one whole read leaves: the whole read is checked first, so a chunked failure is
 * a chunking fault and not a decoding one. */
static void all_vectors_chunked(struct pecs_t *t, const struct pecs_vec_stream *vecs, size_t n)
{
	static const size_t fixed[] = {1, 3, 7};
	size_t ran = 0;

	for (size_t i = 0; i < n; i++) {
		const struct pecs_vec_stream *v = &vecs[i];

		if (!applies(t, v) || v->stream_len == 0)
			continue;
		replay_vector(t, v, -1, whole(v));
		for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++)
			if (fixed[k] < v->stream_len)
				replay_vector(t, v, -1, fixed[k]);
		for (uint32_t k = 0; k < v->nr_chunks; k++)
			if (v->chunks[k] < v->stream_len)
				replay_vector(t, v, -1, v->chunks[k]);
		ran++;
	}
	PECS_CHECK(t, ran > 0, "no non-empty vector applies to this host");
}

PECS_CASE("Required.Profiler.Fxt.ChunkOneByteSameBytes",
	  "profiler.replay,mmap", "STREAM-CHUNKING,FXT-MAX-RECORD,PROF-REPLAY")
{
	all_vectors_chunked(t, pecs_vec_fxt, pecs_vec_fxt_count);
}

PECS_CASE("Required.Profiler.Markup.ChunkOneByteSameBytes",
	  "profiler.replay,mmap", "STREAM-CHUNKING,MARKUP-LINES,MARKUP-BLOCK,PROF-REPLAY")
{
	all_vectors_chunked(t, pecs_vec_markup, pecs_vec_markup_count);
}

/* A malformed stream ends decoding at the bad record or line, but what came before it
 * is delivered: the ring holds the samples decoded before the error, whole reads or 1 or
 * 7 bytes at a time, and DISABLE still succeeds (replay_vector fails the case if not). */
static void malformed_vectors(struct pecs_t *t, const struct pecs_vec_stream *vecs, size_t n)
{
	static const size_t sizes[] = {0 /* whole */, 1, 7};
	size_t ran = 0, kept = 0;

	for (size_t i = 0; i < n; i++) {
		const struct pecs_vec_stream *v = &vecs[i];

		if (!v->error_code || !applies(t, v))
			continue;
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			size_t chunk = sizes[k] ? sizes[k] : whole(v);

			replay_vector(t, v, -1, chunk);
		}
		ran++;
		kept += v->nr_samples > 0;
	}
	/* The vectors were written so that most errors follow a good sample; a set where
	 * none does would not test keeping anything. */
	PECS_CHECK(t, ran > 0 && kept > 0, "%zu malformed vectors apply, %zu with samples "
		   "before the error", ran, kept);
}

PECS_CASE("Required.Profiler.Fxt.MalformedKeepsEarlierSamples",
	  "profiler.replay,mmap",
	  "STREAM-KEEP-BEFORE-ERROR,FXT-SIZE-ZERO,FXT-SIZE-PAST-END,FXT-BACKTRACE,"
	  "PROF-DISABLE-DRAIN")
{
	malformed_vectors(t, pecs_vec_fxt, pecs_vec_fxt_count);
}

PECS_CASE("Required.Profiler.Markup.MalformedKeepsEarlierSamples",
	  "profiler.replay,mmap",
	  "STREAM-KEEP-BEFORE-ERROR,MARKUP-BT-GRAMMAR,MARKUP-ELEMENT,MARKUP-HALF-LINE,"
	  "PROF-DISABLE-DRAIN")
{
	malformed_vectors(t, pecs_vec_markup, pecs_vec_markup_count);
}

/* With the format left to the implementation (PECS_STREAM_DETECT, as Starnix peeks at
 * the socket), every vector whose first bytes decide its own format decodes exactly as
 * when the format is named, including when those bytes arrive one or three at a time. */
PECS_CASE("Required.Profiler.Detect.SameRingBytesAsNamed",
	  "profiler.replay,mmap", "STREAM-DETECT,STREAM-CHUNKING")
{
	static const struct {
		const struct pecs_vec_stream *vecs;
		const size_t *count;
	} sets[] = {{pecs_vec_fxt, &pecs_vec_fxt_count}, {pecs_vec_markup, &pecs_vec_markup_count}};
	static const size_t sizes[] = {0 /* whole */, 1, 3};
	size_t ran[2] = {0, 0};

	for (size_t s = 0; s < 2; s++) {
		for (size_t i = 0; i < *sets[s].count; i++) {
			const struct pecs_vec_stream *v = &sets[s].vecs[i];

			if (!applies(t, v) || !pecs_vector_detect_agrees(v))
				continue;
			for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
				size_t chunk = sizes[k] ? sizes[k] : whole(v);

				if (chunk > v->stream_len && sizes[k])
					continue;
				replay_vector(t, v, PECS_STREAM_DETECT, chunk);
			}
			ran[s]++;
		}
	}
	PECS_CHECK(t, ran[0] > 0 && ran[1] > 0, "detection ran on %zu FXT and %zu markup vectors",
		   ran[0], ran[1]);
}
