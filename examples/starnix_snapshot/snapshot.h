/* The Starnix snapshot example: state shared by its two halves (the syscall surface in
 * snapshot.c, the profiler collection in collect.c). Private to this example. */
#ifndef STARNIX_SNAPSHOT_H
#define STARNIX_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/impl.h"

/* The size of the memory object behind every event's mapping, whatever length the caller
 * maps: records that would land past it are dropped. */
#define SNAP_VMO_SIZE 40960u
/* The collector reads a text stream in pieces of at most this many bytes and parses each
 * piece on its own. */
#define SNAP_TEXT_CHUNK 4096u

struct snap_event {
	int fd;             /* a memfd: a real descriptor number, and the event's memory */
	int leader;         /* opened with group_fd -1, so others may name it as their leader */
	struct pecs_attr attr;
	int disabled;
	uint64_t value;     /* the read() stub: +1 per read while enabled */
	uint64_t time_total;
	uint64_t enabled_at;
	uint64_t id;        /* this event's own id (read's PERF_FORMAT_ID) */
	uint64_t sample_id; /* its leader's id for members: what samples carry */
	int mapped;         /* the metadata page exists once mmap() was called */
	uint64_t write_offset;
	int session;        /* a profiler session runs between ENABLE and DISABLE */
	uint8_t *stream;    /* the bytes the replayed profiler will serve */
	size_t stream_len;
	size_t stream_chunk;
};

/* Parses the installed profiler stream (from its start: one session's output) and writes
 * its samples into ev's memory, as the snapshot does at DISABLE. Returns 0 or -errno. */
int snap_collect(struct snap_event *ev, long page_size);

#endif /* STARNIX_SNAPSHOT_H */
