#include "pecs/profiler/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pecs/opts.h"
#include "profiler_impl.h"

struct replay {
	uint8_t *data;
	size_t len, pos, chunk;
	enum pecs_stream_format format;
	struct pecs_koid_map_entry *koids;
	size_t nr_koids;
	size_t buffer_samples;
};

static int replay_start(struct ref_profiler *p, size_t buffer_bytes)
{
	struct replay *r = p->impl;

	(void)buffer_bytes;
	r->pos = 0;
	return 0;
}

static void replay_stop(struct ref_profiler *p, struct ref_profiler_result *res)
{
	(void)p;
	(void)res; /* the script took no samples itself; the collector counts decoded ones */
}

static ssize_t replay_view(struct ref_profiler *p, const void **data, size_t len, uint32_t *cpu,
			   uint64_t *time)
{
	struct replay *r = p->impl;
	size_t n = r->len - r->pos;

	(void)cpu;
	(void)time;
	if (r->chunk && n > r->chunk)
		n = r->chunk;
	if (n > len)
		n = len;
	*data = r->data + r->pos;
	r->pos += n;
	return n;
}

static ssize_t replay_read(struct ref_profiler *p, void *buf, size_t len, uint32_t *cpu,
			   uint64_t *time)
{
	const void *data;
	ssize_t n = replay_view(p, &data, len, cpu, time);

	memcpy(buf, data, (size_t)n);
	return n;
}

static void replay_reset(struct ref_profiler *p)
{
	((struct replay *)p->impl)->pos = 0;
}

static void replay_destroy(struct ref_profiler *p)
{
	struct replay *r = p->impl;

	free(r->data);
	free(r->koids);
	free(r);
}

static const struct ref_profiler_ops replay_ops = {
	.start = replay_start,
	.stop = replay_stop,
	.read = replay_read,
	.view = replay_view,
	.reset = replay_reset,
	.destroy = replay_destroy,
};

int ref_profiler_new_replay(struct ref_profiler **out, const struct pecs_profiler_stream *ustream)
{
	struct replay *r;
	struct ref_profiler *p;

	struct pecs_profiler_stream st = { 0 };
	const struct pecs_profiler_stream *stream = &st;
	int err = pecs_opts_load(&st, sizeof(st), ustream,
				 PECS_OPTS_SIZE_TO(pecs_profiler_stream, nr_koids));

	if (err)
		return err;
	if (!out || (stream->len && !stream->data) || (stream->nr_koids && !stream->koids) ||
	    stream->format > PECS_STREAM_MARKUP)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	/* +1 so a zero-length stream still gets a distinct allocation. */
	r->data = malloc(stream->len + 1);
	r->koids = calloc(stream->nr_koids + 1, sizeof(*r->koids));
	p = ref_profiler_alloc(&replay_ops, r);
	if (!r->data || !r->koids || !p) {
		free(p);
		free(r->data);
		free(r->koids);
		free(r);
		return -ENOMEM;
	}
	if (stream->len)
		memcpy(r->data, stream->data, stream->len);
	if (stream->nr_koids)
		memcpy(r->koids, stream->koids, stream->nr_koids * sizeof(*r->koids));
	r->len = stream->len;
	r->chunk = stream->chunk;
	r->format = stream->format;
	r->nr_koids = stream->nr_koids;
	r->buffer_samples = stream->buffer_samples;
	*out = p;
	return 0;
}

enum pecs_stream_format ref_replay_format(const struct ref_profiler *p)
{
	if (p->ops != &replay_ops)
		return PECS_STREAM_DETECT;
	return ((const struct replay *)p->impl)->format;
}

const struct pecs_koid_map_entry *ref_replay_koids(const struct ref_profiler *p, size_t *nr)
{
	const struct replay *r = p->impl;

	*nr = 0;
	if (p->ops != &replay_ops)
		return NULL;
	*nr = r->nr_koids;
	return r->nr_koids ? r->koids : NULL;
}

size_t ref_replay_buffer_samples(const struct ref_profiler *p)
{
	if (p->ops != &replay_ops)
		return 0;
	return ((const struct replay *)p->impl)->buffer_samples;
}
