/* A profiler stream as bytes: what a real profiler session (Fuchsia's, or the reference
 * engine's live sampler) writes, in FXT or symbolizer markup, with the koid map that turns
 * Fuchsia's ids into Linux pids and tids. The suite scripts one; the engine replays it.
 */
#ifndef PECS_PROFILER_STREAM_H
#define PECS_PROFILER_STREAM_H

#include <stddef.h>
#include <stdint.h>

/* A Fuchsia kernel object id and the Linux pid or tid it stands for. */
struct pecs_koid_map_entry {
	uint64_t koid;
	uint32_t linux_id;
};

enum pecs_stream_format {
	PECS_STREAM_DETECT = 0, /* let the implementation peek, as Starnix does */
	PECS_STREAM_FXT = 1,
	PECS_STREAM_MARKUP = 2,
};

/* The first word of every FXT stream, its magic-number record (fxt-spec: a metadata
 * record, trace-info type 0, magic 0x16547846 in bits 24..55). Detection peeks at it, so
 * the reader, the writers and the cases must agree on it: this is its one definition. */
#define PECS_FXT_MAGIC_WORD 0x0016547846040010ull

/* A scripted profiler: the bytes a real profiler session would have written. */
struct pecs_profiler_stream {
	size_t size;
	enum pecs_stream_format format;
	const uint8_t *data;
	size_t len;
	size_t chunk;          /* serve at most this many bytes per read; 0 = all at once */
	const struct pecs_koid_map_entry *koids;
	size_t nr_koids;
	/* The profiler's sample buffer holds this many samples; 0 = unbounded. A replay
	 * writes its whole stream when the event is enabled, so every sample past the
	 * first buffer_samples is dropped on a full buffer, as a real profiler drops what
	 * its full buffer cannot take: the event's LOST (feature profiler.drops). */
	size_t buffer_samples;
};

#endif /* PECS_PROFILER_STREAM_H */
