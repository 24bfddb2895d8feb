#include "pecs/stream/fxt_writer.h"

#include <errno.h>
#include <string.h>

#include "pecs/stream/fxt_format.h"

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Copies n bytes and zero-fills to the next word: FXT pads every text to 8 bytes. */
static size_t put_padded(uint8_t *p, const void *src, size_t n)
{
	if (n)
		memcpy(p, src, n);
	memset(p + n, 0, pad8(n) - n);
	return pad8(n);
}

static uint64_t header(unsigned type, size_t bytes)
{
	return ref_fxt_put(type, 0, 3) | ref_fxt_put(bytes / 8, 4, 15);
}

static ssize_t check(size_t bytes, size_t cap)
{
	if (bytes / 8 > REF_FXT_MAX_WORDS)
		return -EINVAL;
	return bytes > cap ? -ENOSPC : 0;
}

ssize_t ref_fxt_write_magic(void *buf, size_t cap)
{
	if (cap < 8)
		return -ENOSPC;
	put64(buf, PECS_FXT_MAGIC_WORD);
	return 8;
}

ssize_t ref_fxt_write_init(void *buf, size_t cap, uint64_t ticks_per_second)
{
	uint8_t *p = buf;

	if (ticks_per_second == 0)
		return -EINVAL;
	if (cap < 16)
		return -ENOSPC;
	put64(p, header(REF_FXT_INIT, 16));
	put64(p + 8, ticks_per_second);
	return 16;
}

static ssize_t metadata(void *buf, size_t cap, uint64_t fields, const char *text, size_t n)
{
	size_t bytes = 8 + pad8(n);
	uint8_t *p = buf;
	ssize_t ret = check(bytes, cap);

	if (ret)
		return ret;
	put64(p, header(REF_FXT_METADATA, bytes) | fields);
	if (n)
		put_padded(p + 8, text, n);
	return bytes;
}

ssize_t ref_fxt_write_provider_info(void *buf, size_t cap, uint32_t id, const char *name,
				    uint8_t name_len)
{
	return metadata(buf, cap,
			ref_fxt_put(REF_FXT_META_PROVIDER_INFO, 16, 19) | ref_fxt_put(id, 20, 51) |
				ref_fxt_put(name_len, 52, 59),
			name, name_len);
}

ssize_t ref_fxt_write_provider_section(void *buf, size_t cap, uint32_t id)
{
	return metadata(buf, cap,
			ref_fxt_put(REF_FXT_META_PROVIDER_SECTION, 16, 19) | ref_fxt_put(id, 20, 51),
			NULL, 0);
}

ssize_t ref_fxt_write_provider_event(void *buf, size_t cap, uint32_t id, uint8_t event)
{
	if (event > 0xf)
		return -EINVAL;
	return metadata(buf, cap,
			ref_fxt_put(REF_FXT_META_PROVIDER_EVENT, 16, 19) | ref_fxt_put(id, 20, 51) |
				ref_fxt_put(event, 52, 55),
			NULL, 0);
}

ssize_t ref_fxt_write_string(void *buf, size_t cap, uint16_t index, const char *text,
			     uint16_t len)
{
	size_t bytes = 8 + pad8(len);
	uint8_t *p = buf;
	ssize_t ret;

	if (index == 0 || index > 0x7fff || len > 0x7fff)
		return -EINVAL;
	ret = check(bytes, cap);
	if (ret)
		return ret;
	put64(p, header(REF_FXT_STRING, bytes) | ref_fxt_put(index, 16, 30) |
			 ref_fxt_put(len, 32, 46));
	put_padded(p + 8, text, len);
	return bytes;
}

ssize_t ref_fxt_write_thread(void *buf, size_t cap, uint8_t index, uint64_t pkoid,
			     uint64_t tkoid)
{
	uint8_t *p = buf;

	if (index == 0)
		return -EINVAL;
	if (cap < 24)
		return -ENOSPC;
	put64(p, header(REF_FXT_THREAD, 24) | ref_fxt_put(index, 16, 23));
	put64(p + 8, pkoid);
	put64(p + 16, tkoid);
	return 24;
}

ssize_t ref_fxt_write_kernel_object(void *buf, size_t cap, uint8_t obj_type, uint64_t koid,
				    const struct ref_fxt_str *name)
{
	uint16_t ref = 0;
	size_t inline_len = 0, bytes;
	uint8_t *p = buf;
	ssize_t ret;

	if (name && name->text) {
		if (name->len > 0x7fff)
			return -EINVAL;
		inline_len = name->len;
		ref = name->len ? REF_FXT_STRREF_INLINE | name->len : 0;
	} else if (name) {
		if (name->index > 0x7fff)
			return -EINVAL;
		ref = name->index;
	}
	bytes = 16 + pad8(inline_len);
	ret = check(bytes, cap);
	if (ret)
		return ret;
	put64(p, header(REF_FXT_KERNEL_OBJECT, bytes) | ref_fxt_put(obj_type, 16, 23) |
			 ref_fxt_put(ref, 24, 39));
	put64(p + 8, koid);
	if (inline_len)
		put_padded(p + 16, name->text, inline_len);
	return bytes;
}

/* Header, timestamp and (for thread ref 0) koids shared by the profiler subtypes. */
static size_t profiler_prefix(uint8_t *p, unsigned subtype, size_t bytes,
			      const struct ref_fxt_who *who, uint64_t ticks, uint64_t fields)
{
	put64(p, header(REF_FXT_PROFILER, bytes) | ref_fxt_put(subtype, 16, 19) |
			 ref_fxt_put(who->thread_ref, 20, 27) | fields);
	put64(p + 8, ticks);
	if (who->thread_ref)
		return 16;
	put64(p + 16, who->pkoid);
	put64(p + 24, who->tkoid);
	return 32;
}

static size_t who_bytes(const struct ref_fxt_who *who)
{
	return who->thread_ref ? 0 : 16;
}

ssize_t ref_fxt_write_backtrace(void *buf, size_t cap, const struct ref_fxt_who *who,
				uint64_t ticks, const uint64_t *ips, size_t nr_ips)
{
	size_t bytes = 16 + who_bytes(who) + 8 * nr_ips, at;
	uint8_t *p = buf;
	ssize_t ret;

	if (nr_ips > 0xff)
		return -EINVAL;
	ret = check(bytes, cap);
	if (ret)
		return ret;
	at = profiler_prefix(p, REF_FXT_PROF_BACKTRACE, bytes, who, ticks,
			     ref_fxt_put(nr_ips, 28, 35));
	for (size_t i = 0; i < nr_ips; i++)
		put64(p + at + 8 * i, ips[i]);
	return bytes;
}

ssize_t ref_fxt_write_module(void *buf, size_t cap, const struct ref_fxt_who *who,
			     uint64_t ticks, uint16_t module_id, const char *name,
			     uint8_t name_len, const uint8_t *build_id, uint8_t build_id_len)
{
	size_t bytes = 16 + who_bytes(who) + pad8(name_len) + pad8(build_id_len), at;
	uint8_t *p = buf;
	ssize_t ret = check(bytes, cap);

	if (ret)
		return ret;
	at = profiler_prefix(p, REF_FXT_PROF_MODULE, bytes, who, ticks,
			     ref_fxt_put(module_id, 28, 43) | ref_fxt_put(name_len, 44, 51) |
				     ref_fxt_put(build_id_len, 52, 59));
	at += put_padded(p + at, name, name_len);
	put_padded(p + at, build_id, build_id_len);
	return bytes;
}

ssize_t ref_fxt_write_mmap(void *buf, size_t cap, const struct ref_fxt_who *who,
			   uint64_t ticks, uint16_t module_id, uint8_t flags, uint64_t start,
			   uint64_t range, uint64_t vaddr)
{
	size_t bytes = 16 + who_bytes(who) + 24, at;
	uint8_t *p = buf;
	ssize_t ret;

	if (flags > 7)
		return -EINVAL;
	ret = check(bytes, cap);
	if (ret)
		return ret;
	at = profiler_prefix(p, REF_FXT_PROF_MMAP, bytes, who, ticks,
			     ref_fxt_put(module_id, 28, 43) | ref_fxt_put(flags, 44, 46));
	put64(p + at, start);
	put64(p + at + 8, range);
	put64(p + at + 16, vaddr);
	return bytes;
}

ssize_t ref_fxt_write_user_regs(void *buf, size_t cap, uint32_t abi, const uint64_t *regs,
				size_t nr_regs, const void *stack, size_t stack_len)
{
	static const char name[] = REF_FXT_USER_REGS_NAME;
	size_t name_len = sizeof(name) - 1, payload = 16 + 8 * nr_regs + stack_len, at;
	size_t bytes = 8 + pad8(name_len) + pad8(payload);
	uint8_t *p = buf;
	ssize_t ret;

	if (nr_regs > REF_FXT_USER_REGS_MAX || payload > REF_FXT_BLOB_MAX_PAYLOAD)
		return -EINVAL;
	ret = check(bytes, cap);
	if (ret)
		return ret;
	put64(p, header(REF_FXT_BLOB, bytes) |
			 ref_fxt_put(REF_FXT_STRREF_INLINE | name_len, 16, 31) |
			 ref_fxt_put(payload, 32, 46) | ref_fxt_put(REF_FXT_BLOB_DATA, 48, 55));
	at = 8 + put_padded(p + 8, name, name_len);
	put64(p + at, abi);
	put64(p + at + 8, nr_regs);
	at += 16;
	for (size_t i = 0; i < nr_regs; i++, at += 8)
		put64(p + at, regs[i]);
	put_padded(p + at, stack, stack_len);
	return bytes;
}
