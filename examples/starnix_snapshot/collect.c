/* The snapshot's profiler collection, run at DISABLE: peek at the stream to tell FXT from
 * symbolizer-markup text, turn backtraces into PERF_RECORD_SAMPLEs and append them to the
 * event's memory. Its gaps are kept on purpose (they are what the suite should find):
 *  - text is read in pieces and each piece is parsed alone, yielding at most one sample;
 *    a line cut by a piece boundary is lost, and the first 8 bytes (the peek) are dropped;
 *  - only IDENTIFIER, IP, TID, ID, PERIOD and CALLCHAIN are written, misc is KERNEL,
 *    and IDENTIFIER/ID carry the leader's id;
 *  - there is no ring: records that do not fit in the memory object are dropped unseen.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshot.h"

#define MAX_IPS 256

struct stream_reader {
	const uint8_t *data;
	size_t len, pos, chunk;
};

/* One read from the profiler's socket: at most `max` bytes and at most one chunk. */
static size_t stream_read(struct stream_reader *r, uint8_t *buf, size_t max)
{
	size_t n = r->len - r->pos;
	if (r->chunk && n > r->chunk)
		n = r->chunk;
	if (n > max)
		n = max;
	memcpy(buf, r->data + r->pos, n);
	r->pos += n;
	return n;
}

struct sample {
	uint32_t pid, tid;
	uint64_t ips[MAX_IPS];
	size_t nr;
};

static int put(struct snap_event *ev, const void *buf, size_t len, uint64_t at)
{
	if (at + len > SNAP_VMO_SIZE)
		return -ENOSPC;
	return pwrite(ev->fd, buf, len, (off_t)at) == (ssize_t)len ? 0 : -EIO;
}

static void publish_head(struct snap_event *ev)
{
	uint32_t lock = 0;
	if (pread(ev->fd, &lock, sizeof(lock), 8) != (ssize_t)sizeof(lock))
		return;
	lock++;
	put(ev, &lock, sizeof(lock), 8);
	put(ev, &ev->write_offset, sizeof(ev->write_offset), 1024);
	lock++;
	put(ev, &lock, sizeof(lock), 8);
}

static void write_sample(struct snap_event *ev, const struct sample *s, long page_size)
{
	uint64_t body[4 + 1 + MAX_IPS + 1];
	size_t n = 0;
	uint64_t type = ev->attr.sample_type;
	if (type & PECS_SAMPLE_IDENTIFIER)
		body[n++] = ev->sample_id;
	if (type & PECS_SAMPLE_IP)
		body[n++] = s->ips[0];
	if (type & PECS_SAMPLE_TID)
		body[n++] = (uint64_t)s->pid | (uint64_t)s->tid << 32;
	if (type & PECS_SAMPLE_ID)
		body[n++] = ev->sample_id;
	if (type & PECS_SAMPLE_PERIOD)
		body[n++] = ev->attr.sample_period;
	if (type & PECS_SAMPLE_CALLCHAIN) {
		body[n++] = s->nr;
		memcpy(&body[n], s->ips, s->nr * sizeof(s->ips[0]));
		n += s->nr;
	}
	struct pecs_record_header h = {
		.type = PECS_RECORD_SAMPLE,
		.misc = PECS_MISC_KERNEL, /* fxbug.dev/432501467 */
		.size = (uint16_t)(sizeof(h) + n * sizeof(body[0])),
	};
	uint64_t at = (uint64_t)page_size + ev->write_offset;
	if (put(ev, &h, sizeof(h), at) < 0 || put(ev, body, n * sizeof(body[0]), at + sizeof(h)) < 0)
		return;
	ev->write_offset += h.size;
	publish_head(ev);
}

/* ---- FXT ---------------------------------------------------------------------- */

static uint64_t word(const uint8_t *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof(w));
	return w;
}

static void collect_fxt(struct snap_event *ev, const uint8_t *p, size_t len, long page_size)
{
	struct {
		uint64_t pkoid, tkoid;
		int set;
	} threads[256];
	memset(threads, 0, sizeof(threads));
	size_t pos = 8; /* past the magic record */
	while (len - pos >= 8) {
		uint64_t h = word(p + pos);
		unsigned type = h & 0xf;
		uint64_t words = type == 15 ? (h >> 4) & 0xffffffffull : (h >> 4) & 0xfff;
		/* A zero size or a record past the end ends the stream; samples so far stay. */
		if (words == 0 || words > (len - pos) / 8)
			return;
		const uint8_t *rec = p + pos;
		pos += words * 8;
		if (type == 3 && words >= 3) {
			unsigned idx = (h >> 16) & 0xff;
			threads[idx].pkoid = word(rec + 8);
			threads[idx].tkoid = word(rec + 16);
			threads[idx].set = 1;
			continue;
		}
		if (type != 10 || ((h >> 16) & 0xf) != 2)
			continue;
		unsigned ref = (h >> 20) & 0xff;
		size_t nr = (h >> 28) & 0xff;
		if (words != 2 + (ref ? 0 : 2) + nr || nr == 0)
			return;
		struct sample s = {.nr = nr};
		size_t at = 16;
		if (ref) {
			if (!threads[ref].set)
				return;
			s.pid = (uint32_t)threads[ref].pkoid;
			s.tid = (uint32_t)threads[ref].tkoid;
		} else {
			s.pid = (uint32_t)word(rec + at);
			s.tid = (uint32_t)word(rec + at + 8);
			at += 16;
		}
		for (size_t i = 0; i < nr; i++)
			s.ips[i] = word(rec + at + 8 * i);
		write_sample(ev, &s, page_size);
	}
}

/* ---- text ---------------------------------------------------------------------- */

static int valid_utf8(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], more;
		if (c < 0x80)
			more = 0;
		else if ((c & 0xe0) == 0xc0 && c >= 0xc2)
			more = 1;
		else if ((c & 0xf0) == 0xe0)
			more = 2;
		else if ((c & 0xf8) == 0xf0 && c <= 0xf4)
			more = 3;
		else
			return 0;
		if (more && i + more >= n)
			return 0;
		for (unsigned k = 1; k <= more; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
		i += 1 + more;
	}
	return 1;
}

static int parse_u32(const char *s, size_t n, uint32_t *out)
{
	size_t i = 0;
	uint64_t v = 0;
	if (n && s[0] == '+')
		i = 1;
	if (i == n)
		return 0;
	for (; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > UINT32_MAX)
			return 0;
	}
	*out = (uint32_t)v;
	return 1;
}

/* "{{{bt:<digits>:0x<hex>:pc}}}" or ":ra}}}", nothing around it; 1 and the address on a match. */
static int parse_bt(const char *s, size_t n, uint64_t *ip, int *overflow)
{
	const char *end = s + n;
	if (n < 6 || memcmp(s, "{{{bt:", 6) != 0)
		return 0;
	s += 6;
	const char *d = s;
	while (s < end && isdigit((unsigned char)*s))
		s++;
	if (s == d || s + 2 >= end || s[0] != ':' || s[1] != '0' || s[2] != 'x')
		return 0;
	s += 3;
	const char *h = s;
	uint64_t v = 0;
	*overflow = 0;
	while (s < end && isxdigit((unsigned char)*s)) {
		if (v >> 60)
			*overflow = 1;
		v = v << 4 | (uint64_t)(isdigit((unsigned char)*s) ? *s - '0'
							    : (tolower((unsigned char)*s) - 'a' + 10));
		s++;
	}
	if (s == h || end - s != 6)
		return 0;
	if (memcmp(s, ":pc}}}", 6) != 0 && memcmp(s, ":ra}}}", 6) != 0)
		return 0;
	*ip = v;
	return 1;
}

/* One piece of text, parsed alone: the first two number lines are pid and tid, every bt
 * line adds an address; all of it is one sample. */
static int parse_piece(const char *text, size_t len, struct sample *s)
{
	int numbers = 0;
	s->nr = 0;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		const char *b = p;
		p = nl ? nl + 1 : end;
		while (b < e && isspace((unsigned char)*b))
			b++;
		while (e > b && isspace((unsigned char)e[-1]))
			e--;
		size_t n = (size_t)(e - b);
		uint32_t num;
		if (numbers < 2 && parse_u32(b, n, &num)) {
			if (numbers++ == 0)
				s->pid = num;
			else
				s->tid = num;
			continue;
		}
		uint64_t ip;
		int overflow;
		if (parse_bt(b, n, &ip, &overflow) && !overflow && s->nr < MAX_IPS)
			s->ips[s->nr++] = ip;
	}
	return numbers == 2 && s->nr > 0;
}

static int collect_text(struct snap_event *ev, struct stream_reader *r, long page_size)
{
	uint8_t buf[SNAP_TEXT_CHUNK];
	size_t n;
	while ((n = stream_read(r, buf, sizeof(buf))) > 0) {
		if (!valid_utf8(buf, n))
			return -EINVAL;
		struct sample s;
		if (parse_piece((const char *)buf, n, &s))
			write_sample(ev, &s, page_size);
	}
	return 0;
}

int snap_collect(struct snap_event *ev, long page_size)
{
	if (!ev->mapped || !ev->stream)
		return 0; /* nothing to publish into, or no profiler output */
	struct stream_reader r = {.data = ev->stream, .len = ev->stream_len,
				  .chunk = ev->stream_chunk};
	uint8_t head[8];
	size_t got = 0, n;
	while (got < sizeof(head) && (n = stream_read(&r, head + got, sizeof(head) - got)) > 0)
		got += n;
	int err = 0;
	if (got == 8 && word(head) == PECS_FXT_MAGIC_WORD)
		collect_fxt(ev, ev->stream, ev->stream_len, page_size);
	else if (got > 0)
		err = collect_text(ev, &r, page_size); /* the peeked bytes are not parsed */
	/* The stream stays installed: the next ENABLE starts a new session that writes it
	 * again from the start, as a real profiler would for a new session. */
	return err;
}
