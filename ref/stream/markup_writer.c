#include "pecs/stream/markup_writer.h"

#include <errno.h>
#include <string.h>

/* A bounded cursor: writes past cap are counted but not stored, so one check at the end
 * reports -ENOSPC. */
struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n <= o->cap)
		memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_dec(struct out *o, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - ++n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, tmp + sizeof(tmp) - n, n);
}

static void put_hex(struct out *o, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[18];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - ++n] = digits[v & 0xf];
		v >>= 4;
	} while (v);
	tmp[sizeof(tmp) - ++n] = 'x';
	tmp[sizeof(tmp) - ++n] = '0';
	put(o, tmp + sizeof(tmp) - n, n);
}

static ssize_t done(const struct out *o)
{
	return o->len > o->cap ? -ENOSPC : (ssize_t)o->len;
}

ssize_t ref_markup_write_reset(char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };

	puts_(&o, "{{{reset}}}\n");
	return done(&o);
}

ssize_t ref_markup_write_ids(char *buf, size_t cap, uint64_t pid, uint64_t tid)
{
	struct out o = { buf, cap, 0 };

	put_dec(&o, pid);
	put(&o, "\n", 1);
	put_dec(&o, tid);
	put(&o, "\n", 1);
	return done(&o);
}

static void frame(struct out *o, unsigned index, uint64_t addr, enum ref_markup_frame_kind kind)
{
	puts_(o, "{{{bt:");
	put_dec(o, index);
	put(o, ":", 1);
	put_hex(o, addr);
	if (kind == REF_MARKUP_FRAME_PC)
		puts_(o, ":pc");
	else if (kind == REF_MARKUP_FRAME_RA)
		puts_(o, ":ra");
	puts_(o, "}}}\n");
}

ssize_t ref_markup_write_frame(char *buf, size_t cap, unsigned index, uint64_t addr,
			       enum ref_markup_frame_kind kind)
{
	struct out o = { buf, cap, 0 };

	frame(&o, index, addr, kind);
	return done(&o);
}

ssize_t ref_markup_write_sample(char *buf, size_t cap, uint64_t pid, uint64_t tid,
				const uint64_t *ips, size_t nr_ips)
{
	struct out o = { buf, cap, 0 };

	put_dec(&o, pid);
	put(&o, "\n", 1);
	put_dec(&o, tid);
	put(&o, "\n", 1);
	for (size_t i = 0; i < nr_ips; i++)
		frame(&o, i, ips[i], i ? REF_MARKUP_FRAME_RA : REF_MARKUP_FRAME_PC);
	return done(&o);
}

ssize_t ref_markup_write_module(char *buf, size_t cap, unsigned id, const char *name,
				const uint8_t *build_id, size_t build_id_len)
{
	static const char digits[] = "0123456789abcdef";
	struct out o = { buf, cap, 0 };

	puts_(&o, "{{{module:");
	put_dec(&o, id);
	put(&o, ":", 1);
	puts_(&o, name);
	puts_(&o, ":elf:");
	for (size_t i = 0; i < build_id_len; i++) {
		put(&o, &digits[build_id[i] >> 4], 1);
		put(&o, &digits[build_id[i] & 0xf], 1);
	}
	puts_(&o, "}}}\n");
	return done(&o);
}

ssize_t ref_markup_write_mmap(char *buf, size_t cap, uint64_t start, uint64_t size,
			      unsigned module_id, unsigned flags, uint64_t vaddr)
{
	struct out o = { buf, cap, 0 };

	puts_(&o, "{{{mmap:");
	put_hex(&o, start);
	put(&o, ":", 1);
	put_hex(&o, size);
	puts_(&o, ":load:");
	put_dec(&o, module_id);
	put(&o, ":", 1);
	if (flags & 4)
		put(&o, "r", 1);
	if (flags & 2)
		put(&o, "w", 1);
	if (flags & 1)
		put(&o, "x", 1);
	put(&o, ":", 1);
	put_hex(&o, vaddr);
	puts_(&o, "}}}\n");
	return done(&o);
}
