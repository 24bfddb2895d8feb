#define _GNU_SOURCE
#include "pecs/toolkit/profiler.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "pecs/toolkit/ring.h"

#define DEFAULT_PERIOD_NS 1000000ull
#define MAX_DATA_PAGES 64u

#define MAGIC_BYTE(i) ((uint8_t)(PECS_FXT_MAGIC_WORD >> (8 * (i))))
const uint8_t pecs_fxt_magic[8] = {
	MAGIC_BYTE(0), MAGIC_BYTE(1), MAGIC_BYTE(2), MAGIC_BYTE(3),
	MAGIC_BYTE(4), MAGIC_BYTE(5), MAGIC_BYTE(6), MAGIC_BYTE(7),
};

/* Room for twice the expected bytes, so an implementation that writes too much shows
 * its extra records instead of wrapping over the expected ones. */
static unsigned int data_pages_for(size_t expect_len, long page)
{
	unsigned int pages = 1;

	while (pages < MAX_DATA_PAGES && (uint64_t)pages * (uint64_t)page < 2 * expect_len + 64)
		pages *= 2;
	return pages;
}

int pecs_replay_run(struct pecs_t *t, const struct pecs_replay *r, struct pecs_replay_out *out)
{
	static struct pecs_ring ring; /* the bounce buffer is 64 KiB: keep it off the stack */
	struct pecs_profiler_stream st = {
		.size = sizeof(st),
		.format = r->format,
		.data = r->data,
		.len = r->len,
		.chunk = r->chunk,
		.koids = r->nr_koids ? r->koids : NULL,
		.nr_koids = r->nr_koids,
	};
	struct pecs_attr a;
	uint64_t head, copy;
	int fd, err;

	out->head = 0;
	out->id = 0;
	out->step = "";
	pecs_attr_sampling(t, &a, PECS_SW_TASK_CLOCK, r->period ? r->period : DEFAULT_PERIOD_NS,
			   r->sample_type);
	a.read_format = r->read_format;
	fd = pecs_open(t, &a, 0, -1, -1, 0);
	if (fd < 0) {
		out->step = "perf_event_open";
		return fd;
	}
	err = pecs_ring_map(t, fd, data_pages_for(r->expect_len, pecs_host(t)->page_size),
			    PROT_READ | PROT_WRITE, &ring);
	if (err < 0) {
		out->step = "mmap";
		goto close_fd;
	}
	if (pecs_event_id(t, fd, &out->id) < 0)
		out->id = 0; /* only vectors with an "id" field need it; they will then differ */
	err = pecs_set_profiler(t, fd, &st);
	if (err < 0) {
		out->step = "set_profiler";
		goto unmap;
	}
	err = pecs_ioctl(t, fd, PECS_IOC_ENABLE, 0);
	if (err < 0) {
		out->step = "PERF_EVENT_IOC_ENABLE";
		goto unmap;
	}
	/* A real profiler writes while the event is enabled; the stream ends at DISABLE,
	 * which must deliver everything decoded, errors included, and not fail. */
	err = pecs_ioctl(t, fd, PECS_IOC_DISABLE, 0);
	if (err < 0) {
		out->step = "PERF_EVENT_IOC_DISABLE";
		goto unmap;
	}
	head = pecs_ring_head(&ring);
	out->head = head;
	copy = head < ring.data_size ? head : ring.data_size;
	if (copy > out->cap)
		copy = out->cap;
	if (copy)
		memcpy(out->ring, ring.data, (size_t)copy);
unmap:
	if (pecs_munmap(t, ring.meta, ring.map_len) < 0 && err == 0) {
		out->step = "munmap";
		err = -EFAULT;
	}
close_fd:
	if (pecs_close(t, fd) < 0 && err == 0) {
		out->step = "close";
		err = -EBADF;
	}
	return err;
}

void pecs_replay_from_vector(struct pecs_replay *r, const struct pecs_vec_stream *v,
			     int format, size_t chunk, struct pecs_koid_map_entry *koid_buf,
			     size_t koid_cap)
{
	size_t n = v->nr_koids < koid_cap ? v->nr_koids : koid_cap;

	for (size_t i = 0; i < n; i++) {
		koid_buf[i].koid = v->koids[i].koid;
		koid_buf[i].linux_id = v->koids[i].linux_id;
	}
	memset(r, 0, sizeof(*r));
	r->sample_type = v->sample_type;
	r->read_format = v->read_format;
	r->period = v->sample_period;
	r->format = format >= 0 ? (enum pecs_stream_format)format
				: (v->is_text ? PECS_STREAM_MARKUP : PECS_STREAM_FXT);
	r->data = v->stream;
	r->len = v->stream_len;
	r->chunk = chunk;
	r->koids = koid_buf;
	r->nr_koids = n;
	r->expect_len = v->ring_len;
}

void pecs_stream_from_vector(struct pecs_profiler_stream *st, const struct pecs_vec_stream *v,
			     size_t chunk, struct pecs_koid_map_entry *koid_buf, size_t koid_cap)
{
	size_t n = v->nr_koids < koid_cap ? v->nr_koids : koid_cap;

	for (size_t i = 0; i < n; i++) {
		koid_buf[i].koid = v->koids[i].koid;
		koid_buf[i].linux_id = v->koids[i].linux_id;
	}
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->format = PECS_STREAM_FXT;
	st->data = v->stream;
	st->len = v->stream_len;
	st->chunk = chunk;
	st->koids = n ? koid_buf : NULL;
	st->nr_koids = n;
}

/* Index of the record holding byte off of a ring of perf records, and its start. */
static int record_at(const uint8_t *ring, size_t len, size_t off, size_t *start)
{
	size_t pos = 0;
	int idx = 0;

	while (pos + sizeof(struct pecs_record_header) <= len) {
		struct pecs_record_header h;

		memcpy(&h, ring + pos, sizeof(h));
		if (h.size < sizeof(h) || off < pos + h.size)
			break;
		pos += h.size;
		idx++;
	}
	*start = pos;
	return idx;
}

/* Records in a span of perf records, counting a malformed tail as one more. */
static int count_records(const uint8_t *ring, size_t len)
{
	size_t start;

	return len ? record_at(ring, len, len, &start) + (start < len) : 0;
}

const char *pecs_replay_diff(const uint8_t *got, size_t got_len, const uint8_t *want,
			     size_t want_len, char *buf, size_t buflen)
{
	size_t n = got_len < want_len ? got_len : want_len, off = n, start;
	int idx, used;

	for (size_t i = 0; i < n; i++) {
		if (got[i] != want[i]) {
			off = i;
			break;
		}
	}
	if (off == n && got_len == want_len) {
		snprintf(buf, buflen, "no difference");
		return buf;
	}
	used = snprintf(buf, buflen, "%d records, want %d; ", count_records(got, got_len),
			count_records(want, want_len));
	if (used < 0 || (size_t)used >= buflen)
		return buf;
	buf += used;
	buflen -= (size_t)used;
	idx = record_at(want_len > off ? want : got, want_len > off ? want_len : got_len, off,
			&start);
	if (off < n)
		snprintf(buf, buflen, "first difference at byte %zu (record %d, byte %zu of it): "
			 "got 0x%02x, want 0x%02x", off, idx, off - start, got[off], want[off]);
	else if (got_len < want_len)
		snprintf(buf, buflen, "records missing from byte %zu (record %d on)", off, idx);
	else
		snprintf(buf, buflen, "extra records from byte %zu (record %d on)", off, idx);
	return buf - used;
}

int pecs_replay_check_vector(const struct pecs_vec_stream *v, const struct pecs_replay_out *out,
			     size_t chunk, char *msg, size_t msglen)
{
	uint8_t want[8192], got[8192];
	char diff[256];
	size_t len = v->ring_len;

	if (len > sizeof(want)) {
		snprintf(msg, msglen, "tcId %d: expected ring of %zu bytes is larger than the "
			 "checker's buffer", v->tc_id, len);
		return -1;
	}
	/* A vector with an empty ring has no bytes (NULL); memcpy must not see it. */
	if (len) {
		memcpy(want, v->ring, len);
		if (out->head)
			memcpy(got, out->ring, out->head < len ? (size_t)out->head : len);
	}
	for (uint32_t i = 0; i < v->nr_dynamic; i++) {
		const struct pecs_vec_dynamic *d = &v->dynamic[i];

		if ((uint64_t)d->offset + d->size > len)
			continue;
		if (strcmp(d->field, "id") == 0 && d->size == sizeof(out->id))
			memcpy(want + d->offset, &out->id, sizeof(out->id));
		else if (out->head >= (uint64_t)d->offset + d->size)
			memcpy(got + d->offset, want + d->offset, d->size); /* not compared */
	}
	if (out->head == len && memcmp(got, want, len) == 0)
		return 0;
	snprintf(msg, msglen, "tcId %d (%s), chunk %zu: ring holds %llu bytes, want %zu; %s",
		 v->tc_id, v->comment, chunk, (unsigned long long)out->head, len,
		 pecs_replay_diff(out->ring, out->head < out->cap ? (size_t)out->head : out->cap,
				  want, len, diff, sizeof(diff)));
	return -1;
}

int pecs_vector_fits_host(struct pecs_t *t, const struct pecs_vec_stream *v)
{
	int max = pecs_host(t)->max_stack;

	if (!(v->sample_type & PECS_SAMPLE_CALLCHAIN) || max == 127)
		return 1;
	if (max > 127)
		max = 127;
	for (uint32_t i = 0; i < v->nr_samples; i++)
		if (v->samples[i].nr_ips + 1 > (uint32_t)max)
			return 0;
	return 1;
}

int pecs_vector_detect_agrees(const struct pecs_vec_stream *v)
{
	size_t n = v->stream_len < sizeof(pecs_fxt_magic) ? v->stream_len : sizeof(pecs_fxt_magic);
	int magic_prefix;

	if (n == 0)
		return 1; /* no stream at all, whatever it is called */
	magic_prefix = memcmp(v->stream, pecs_fxt_magic, n) == 0;
	return v->is_text ? !magic_prefix : magic_prefix;
}
