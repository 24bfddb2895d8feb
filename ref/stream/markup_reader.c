#include "pecs/stream/markup_reader.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "markup_scan.h"

enum block_state {
	WANT_PID,
	WANT_TID,
	IN_BLOCK,
};

struct ref_markup_reader {
	struct ref_stream_target target;
	struct ref_stream_observer observer;
	bool have_observer;

	uint64_t offset;     /* stream offset of the next byte pushed */
	uint64_t line_start; /* stream offset of the line being gathered or parsed */
	size_t line_len;

	enum block_state state;
	uint64_t pkoid, tkoid;
	uint32_t nr;

	struct ref_stream_error err;
	int err_ret;
	struct ref_stream_stats stats;

	uint64_t ips[REF_STREAM_MAX_FRAMES];
	char line[REF_MARKUP_MAX_LINE];
};

/* A field of an element: [p, p + n). */
struct span {
	const char *p;
	size_t n;
};

int ref_markup_reader_new(struct ref_markup_reader **out, const struct ref_stream_target *target)
{
	struct ref_markup_reader *r;

	struct ref_stream_target t = { 0 };
	struct ref_stream_observer o = { 0 };
	int err = ref_stream_target_load(&t, &o, target);

	if (err || !out)
		return err ? err : -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->target = t;
	r->observer = o;
	r->have_observer = t.observer != NULL;
	r->target.observer = r->have_observer ? &r->observer : NULL;
	*out = r;
	return 0;
}

void ref_markup_reader_free(struct ref_markup_reader *r)
{
	free(r);
}

static int fail(struct ref_markup_reader *r, enum ref_stream_errc code)
{
	r->err.code = code;
	r->err.offset = r->line_start;
	r->err_ret = -EBADMSG;
	return r->err_ret;
}

static bool span_is(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* Hex digit values, -1 for anything else; a table keeps address parsing branch-light. */
static const signed char hex_digit[256] = {
	['0'] = 0 + 1, ['1'] = 1 + 1, ['2'] = 2 + 1, ['3'] = 3 + 1, ['4'] = 4 + 1,
	['5'] = 5 + 1, ['6'] = 6 + 1, ['7'] = 7 + 1, ['8'] = 8 + 1, ['9'] = 9 + 1,
	['a'] = 10 + 1, ['b'] = 11 + 1, ['c'] = 12 + 1, ['d'] = 13 + 1, ['e'] = 14 + 1,
	['f'] = 15 + 1, ['A'] = 10 + 1, ['B'] = 11 + 1, ['C'] = 12 + 1, ['D'] = 13 + 1,
	['E'] = 14 + 1, ['F'] = 15 + 1,
};

/* Stored +1 so the table's zero fill means "not a digit". */
static int hexval(char c)
{
	return hex_digit[(unsigned char)c] - 1;
}

/* Decimal without sign or spaces, as the spec's %u / %i in decimal. */
static bool parse_dec(struct span s, uint64_t *v)
{
	uint64_t x = 0;

	if (s.n == 0)
		return false;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return false;
		if (x > (UINT64_MAX - (s.p[i] - '0')) / 10)
			return false;
		x = x * 10 + (s.p[i] - '0');
	}
	*v = x;
	return true;
}

/* %p: "0x" then 1 to 16 hex digits. */
static bool parse_addr(struct span s, uint64_t *v)
{
	uint64_t x = 0;

	if (s.n < 3 || s.n > 18 || s.p[0] != '0' || (s.p[1] != 'x' && s.p[1] != 'X'))
		return false;
	for (size_t i = 2; i < s.n; i++) {
		int d = hexval(s.p[i]);

		if (d < 0)
			return false;
		x = (x << 4) | (unsigned)d;
	}
	*v = x;
	return true;
}

/* %i: decimal or 0x-prefixed hex. */
static bool parse_int(struct span s, uint64_t *v)
{
	return parse_addr(s, v) || parse_dec(s, v);
}

static int deliver(struct ref_markup_reader *r)
{
	struct pecs_sample s;
	uint32_t pid, tid;
	int ret;

	if (r->state != IN_BLOCK || r->nr == 0)
		return 0;
	if (ref_stream_map_koid(&r->target, r->pkoid, &pid) ||
	    ref_stream_map_koid(&r->target, r->tkoid, &tid)) {
		r->stats.dropped_unmapped++;
		r->nr = 0;
		return 0;
	}
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.pid = pid;
	s.tid = tid;
	s.misc = PECS_MISC_USER;
	s.nr_ips = r->nr;
	s.ips = r->ips;
	r->nr = 0;
	ret = r->target.sink(r->target.sink_ctx, &s);
	if (ret < 0) {
		fail(r, REF_STREAM_E_SINK);
		r->err_ret = ret;
		return ret;
	}
	r->stats.samples++;
	return 0;
}

/* An id line's value: the pid, or the tid after it; a pid in a block closes it. */
static int id_line(struct ref_markup_reader *r, uint64_t v)
{
	int ret;

	switch (r->state) {
	case WANT_TID:
		r->tkoid = v;
		r->state = IN_BLOCK;
		r->nr = 0;
		return 0;
	case IN_BLOCK:
		ret = deliver(r);
		if (ret)
			return ret;
		/* the number opens the next block */
		__attribute__((fallthrough));
	case WANT_PID:
		r->pkoid = v;
		r->state = WANT_TID;
		return 0;
	}
	return 0;
}

static int do_number(struct ref_markup_reader *r, struct span s)
{
	uint64_t v;

	if (!parse_dec(s, &v))
		return fail(r, REF_MARKUP_E_BAD_NUMBER);
	return id_line(r, v);
}

/* An element's fields: f[0] is the tag; n counts them, MAX_FIELDS + 1 meaning "more". */
#define MAX_FIELDS 7

/* One frame of the block, its fields already checked. */
static int bt_frame(struct ref_markup_reader *r, uint64_t index, uint64_t addr)
{
	int ret;

	if (r->state != IN_BLOCK)
		return fail(r, REF_MARKUP_E_BT_OUTSIDE_BLOCK);
	/* A new frame 0 under the same ids starts another sample of that thread. */
	if (index == 0 && r->nr) {
		ret = deliver(r);
		if (ret)
			return ret;
	}
	if (index != r->nr)
		return fail(r, REF_MARKUP_E_BAD_FRAME_INDEX);
	if (r->nr == REF_STREAM_MAX_FRAMES)
		return fail(r, REF_MARKUP_E_TOO_MANY_FRAMES);
	r->ips[r->nr++] = addr;
	return 0;
}

static int do_bt(struct ref_markup_reader *r, const struct span *f, size_t n)
{
	uint64_t index, addr;

	if (n < 3 || n > 4 || !parse_dec(f[1], &index) || !parse_addr(f[2], &addr) ||
	    (n == 4 && !span_is(f[3], "pc") && !span_is(f[3], "ra")))
		return fail(r, REF_MARKUP_E_BAD_BT);
	return bt_frame(r, index, addr);
}

/* The common line, "{{{bt:N:0xADDR}}}" or with ":pc" or ":ra", read in one pass with no
 * field splitting: the end of its "}}}", or NULL for anything else, which the general
 * path then judges (so every verdict stays its). */
static const char *bt_scan(const char *p, const char *end, uint64_t *index, uint64_t *addr)
{
	const char *q = p + 6;
	uint64_t x = 0;
	int d, digits = 0;

	if (end - p < 14 || memcmp(p, "{{{bt:", 6) != 0)
		return NULL;
	/* Up to 9 decimal digits cannot overflow; longer ones take the general path. */
	while (q < end && *q >= '0' && *q <= '9' && digits < 9) {
		x = x * 10 + (uint64_t)(*q++ - '0');
		digits++;
	}
	if (!digits || end - q < 7 || q[0] != ':' || q[1] != '0' || (q[2] != 'x' && q[2] != 'X'))
		return NULL;
	*index = x;
	q += 3;
	x = 0;
	digits = 0;
	if (end - q >= 8 && ms_hex8(q, &x)) {
		q += 8;
		digits = 8;
	}
	while (q < end && (d = hexval(*q)) >= 0 && digits < 16) {
		x = x << 4 | (unsigned)d;
		q++;
		digits++;
	}
	if (!digits)
		return NULL;
	*addr = x;
	if (end - q >= 6 && q[0] == ':' &&
	    ((q[1] == 'p' && q[2] == 'c') || (q[1] == 'r' && q[2] == 'a')))
		q += 3;
	if (end - q < 3 || q[0] != '}' || q[1] != '}' || q[2] != '}')
		return NULL;
	return q + 3;
}

static int bt_fast(const char *p, size_t n, uint64_t *index, uint64_t *addr)
{
	return bt_scan(p, p + n, index, addr) == p + n;
}

/* A whole bt line at the start of p[0, len), newline included, read without first
 * looking for the newline or copying: its length with the newline, or 0 when p does
 * not start with one (blanks, "\r" or anything unusual take the general path). */
static size_t bt_line(const char *p, size_t len, uint64_t *index, uint64_t *addr)
{
	const char *q = bt_scan(p, p + len, index, addr);

	return q && q < p + len && *q == '\n' ? (size_t)(q - p) + 1 : 0;
}

static bool is_hex_bytes(struct span s)
{
	if (s.n == 0 || s.n % 2)
		return false;
	for (size_t i = 0; i < s.n; i++)
		if (hexval(s.p[i]) < 0)
			return false;
	return true;
}

static int do_module(struct ref_markup_reader *r, const struct span *f, size_t n)
{
	uint8_t id[64];
	uint64_t mid;

	if (n != 5 || !parse_int(f[1], &mid) || mid > UINT32_MAX || f[2].n == 0 ||
	    !span_is(f[3], "elf") || !is_hex_bytes(f[4]) || f[4].n / 2 > sizeof(id))
		return fail(r, REF_MARKUP_E_BAD_MODULE);
	for (size_t i = 0; i < f[4].n / 2; i++)
		id[i] = (uint8_t)(hexval(f[4].p[2 * i]) << 4 | hexval(f[4].p[2 * i + 1]));
	if (r->have_observer && r->observer.module)
		r->observer.module(r->target.observer_ctx, r->pkoid, (uint32_t)mid, f[2].p,
				   f[2].n, id, f[4].n / 2);
	return 0;
}

/* r, w, x in that order, each optional and in either case, at least one: the mode as
 * LLVM's filter reads it (an empty mode is refused). */
static bool parse_mode(struct span s, uint32_t *flags)
{
	static const char order[] = "rwx";
	static const uint32_t bits[] = { 4, 2, 1 };
	size_t i = 0;

	*flags = 0;
	for (size_t k = 0; k < 3 && i < s.n; k++) {
		if (s.p[i] == order[k] || s.p[i] == order[k] - ('a' - 'A')) {
			*flags |= bits[k];
			i++;
		}
	}
	return s.n > 0 && i == s.n;
}

static int do_mmap(struct ref_markup_reader *r, const struct span *f, size_t n)
{
	uint64_t start, size, mid, vaddr;
	uint32_t flags;

	if (n != 7 || !parse_addr(f[1], &start) || !parse_int(f[2], &size) ||
	    !span_is(f[3], "load") || !parse_int(f[4], &mid) || mid > UINT32_MAX ||
	    !parse_mode(f[5], &flags) || !parse_addr(f[6], &vaddr))
		return fail(r, REF_MARKUP_E_BAD_MMAP);
	if (r->have_observer && r->observer.mmap)
		r->observer.mmap(r->target.observer_ctx, r->pkoid, (uint32_t)mid, start, size,
				 vaddr, flags);
	return 0;
}

/* p starts with "{{{". One pass splits the body at ':' and finds the closing "}}}",
 * which must end the line (trailing blanks were trimmed by the caller). */
static int do_element(struct ref_markup_reader *r, const char *p, size_t len)
{
	struct span f[MAX_FIELDS + 1];
	const char *q = p + 3, *end = p + len, *field = q;
	size_t n = 0;
	int ret;

	for (;; q++) {
		if (end - q < 3)
			return fail(r, REF_MARKUP_E_BAD_ELEMENT);
		if (*q == ':' || (q[0] == '}' && q[1] == '}' && q[2] == '}')) {
			if (n <= MAX_FIELDS) {
				f[n].p = field;
				f[n].n = q - field;
			}
			n++;
			if (*q != ':')
				break;
			field = q + 1;
		}
	}
	if (q + 3 != end)
		return fail(r, REF_MARKUP_E_BAD_ELEMENT);
	if (n > MAX_FIELDS)
		n = MAX_FIELDS + 1;
	if (f[0].n == 0)
		return fail(r, REF_MARKUP_E_BAD_ELEMENT);
	if (span_is(f[0], "bt"))
		return do_bt(r, f, n);
	if (span_is(f[0], "reset")) {
		if (n != 1)
			return fail(r, REF_MARKUP_E_BAD_RESET);
		ret = deliver(r);
		if (ret)
			return ret;
		r->state = WANT_PID;
		return 0;
	}
	if (span_is(f[0], "module"))
		return do_module(r, f, n);
	if (span_is(f[0], "mmap"))
		return do_mmap(r, f, n);
	/* Other tags (symbol, data, hexdict, ...) carry nothing a sample needs. */
	r->stats.skipped++;
	return 0;
}

static int do_line(struct ref_markup_reader *r, const char *p, size_t n)
{
	uint64_t index, addr;
	int ret;

	if (n && p[n - 1] == '\r')
		n--;
	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n == 0)
		ret = 0;
	else if (*p >= '0' && *p <= '9')
		ret = do_number(r, (struct span){ p, n });
	else if (bt_fast(p, n, &index, &addr))
		ret = bt_frame(r, index, addr);
	else if (n >= 3 && p[0] == '{' && p[1] == '{' && p[2] == '{')
		ret = do_element(r, p, n);
	else
		ret = fail(r, REF_MARKUP_E_BAD_LINE);
	if (ret == 0)
		r->stats.records++;
	return ret;
}

/* Counts lines [s, p) (lines of them, the last starting at last) as read. */
static void scan_commit(struct ref_markup_reader *r, const char *s, const char *p,
			const char *last, uint64_t lines)
{
	if (!lines)
		return;
	r->line_start = r->offset + (uint64_t)(last - s);
	r->offset += (uint64_t)(p - s);
	r->stats.bytes += (uint64_t)(p - s);
	r->stats.records += lines;
}

/* Reads lines from p for as long as they start at or before stop (MARKUP_SCAN_SLACK
 * bytes before the end of the push) and markup_scan.h knows them: *out is where it
 * stopped. The next frame of a block, the commonest line, costs a few word operations
 * and a store, the block's length and the counters kept here until another line comes;
 * an id line goes through the same steps, in the same order, as on the per-line path in
 * ref_markup_reader_feed(), which reads every other line. */
static int scan_lines(struct ref_markup_reader *r, const char *p, const char *stop,
		      const char **out)
{
	const char *s = p, *last = p;
	uint64_t lines = 0, v;
	uint32_t nr = r->nr, limit = r->state == IN_BLOCK ? REF_STREAM_MAX_FRAMES : 0;
	size_t n, guess = 0, g;
	int ret = 0;

	while (p <= stop) {
		if (nr < limit && (n = markup_scan_frame(p, &ms_idx[nr], &v))) {
			r->ips[nr++] = v;
			last = p;
			lines++;
			/* A block's lines tend to have one length. Stepping by the last one's
			 * when this one has it makes the next line's start a predicted branch
			 * instead of the end of this line's reading, so lines overlap: that
			 * dependency, not the work, bounded a frame to ~6 ns. The asm keeps
			 * the compiler from stepping by n, which it knows is equal. */
			g = guess;
			__asm__("" : "+r"(g));
			if (n == guess) {
				p += g;
			} else {
				guess = n;
				p += n;
			}
			continue;
		}
		r->nr = nr;
		scan_commit(r, s, p, last, lines);
		lines = 0;
		n = markup_scan_id(p, &v);
		if (!n)
			break;
		/* The per-line path counts an id line's bytes before reading it. */
		r->line_start = r->offset;
		r->offset += n;
		r->stats.bytes += n;
		ret = id_line(r, v);
		nr = r->nr;
		limit = r->state == IN_BLOCK ? REF_STREAM_MAX_FRAMES : 0;
		if (ret)
			break;
		r->stats.records++;
		p += n;
		s = p;
	}
	r->nr = nr;
	scan_commit(r, s, p, last, lines);
	*out = p;
	return ret;
}

int ref_markup_reader_feed(struct ref_markup_reader *r, const void *data, size_t len)
{
	const char *p = data;

	if (r->err.code)
		return r->err_ret;
	while (len) {
		const char *nl;
		size_t take;
		uint64_t index, addr;

		if (MARKUP_SCAN_WORDS && r->line_len == 0 && len >= MARKUP_SCAN_SLACK) {
			if (scan_lines(r, p, p + len - MARKUP_SCAN_SLACK, &nl))
				return r->err_ret;
			len -= (size_t)(nl - p);
			p = nl;
		}

		/* Most lines of a stream are frames: read them where they lie, in one pass. */
		if (r->line_len == 0 && *p == '{' && (take = bt_line(p, len, &index, &addr))) {
			r->line_start = r->offset;
			if (bt_frame(r, index, addr))
				return r->err_ret;
			r->stats.records++;
			r->offset += take;
			r->stats.bytes += take;
			p += take;
			len -= take;
			continue;
		}
		nl = memchr(p, '\n', len);
		take = nl ? (size_t)(nl - p) : len;
		if (r->line_len == 0)
			r->line_start = r->offset;
		/* Checked on both paths so the verdict does not depend on chunking. */
		if (r->line_len + take > sizeof(r->line))
			return fail(r, REF_MARKUP_E_LINE_TOO_LONG);
		if (!nl || r->line_len) {
			memcpy(r->line + r->line_len, p, take);
			r->line_len += take;
		}
		r->offset += take + (nl ? 1 : 0);
		r->stats.bytes += take + (nl ? 1 : 0);
		if (!nl)
			break;
		if (r->line_len) {
			size_t n = r->line_len;

			r->line_len = 0;
			if (do_line(r, r->line, n))
				return r->err_ret;
		} else if (do_line(r, p, take)) {
			return r->err_ret;
		}
		p += take + 1;
		len -= take + 1;
	}
	return 0;
}

int ref_markup_reader_finish(struct ref_markup_reader *r)
{
	if (r->err.code)
		return r->err_ret;
	if (r->line_len)
		return fail(r, REF_STREAM_E_TRUNCATED);
	return deliver(r);
}

void ref_markup_reader_error(const struct ref_markup_reader *r, struct ref_stream_error *err)
{
	*err = r->err;
}

void ref_markup_reader_stats(const struct ref_markup_reader *r, struct ref_stream_stats *stats)
{
	if (stats)
		*stats = r->stats;
}
