/* The replay profiler: serves bytes a caller scripted, as a real profiler session's
 * socket would, at most `chunk` bytes per read (1 byte included). The bytes and koid map
 * are copied, so the stream may be freed after creation. Each start serves the stream
 * again from its first byte; the configuration is checked like a live profiler's but
 * otherwise unused.
 */
#ifndef PECS_PROFILER_REPLAY_H
#define PECS_PROFILER_REPLAY_H

#include "pecs/profiler_stream.h"
#include "pecs/profiler/profiler.h"

int ref_profiler_new_replay(struct ref_profiler **out, const struct pecs_profiler_stream *stream);

/* The stream's declared format and koid map (valid while the profiler lives). */
enum pecs_stream_format ref_replay_format(const struct ref_profiler *p);
const struct pecs_koid_map_entry *ref_replay_koids(const struct ref_profiler *p, size_t *nr);
/* The stream's buffer_samples: how many of its samples one enable keeps (0: all). */
size_t ref_replay_buffer_samples(const struct ref_profiler *p);

#endif /* PECS_PROFILER_REPLAY_H */
