/* FXT record writer. Writes into a caller's buffer and never allocates, locks or calls
 * stdio, so the live sampler may use it inside a signal handler. Each function returns
 * the number of bytes written (a multiple of 8) or -ENOSPC when cap is too small, and
 * -EINVAL for values the format cannot carry.
 */
#ifndef PECS_STREAM_FXT_WRITER_H
#define PECS_STREAM_FXT_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A string reference: inline text when text != NULL, else a string-table index
 * (0 = the empty string). */
struct ref_fxt_str {
	const char *text;
	uint16_t len;
	uint16_t index;
};

/* Koids of a record: thread_ref != 0 names a thread-table entry and the koids are not
 * written; thread_ref 0 writes them inline. */
struct ref_fxt_who {
	uint8_t thread_ref;
	uint64_t pkoid, tkoid;
};

ssize_t ref_fxt_write_magic(void *buf, size_t cap);
ssize_t ref_fxt_write_init(void *buf, size_t cap, uint64_t ticks_per_second);
ssize_t ref_fxt_write_provider_info(void *buf, size_t cap, uint32_t id, const char *name,
				    uint8_t name_len);
ssize_t ref_fxt_write_provider_section(void *buf, size_t cap, uint32_t id);
ssize_t ref_fxt_write_provider_event(void *buf, size_t cap, uint32_t id, uint8_t event);
ssize_t ref_fxt_write_string(void *buf, size_t cap, uint16_t index, const char *text,
			     uint16_t len);
ssize_t ref_fxt_write_thread(void *buf, size_t cap, uint8_t index, uint64_t pkoid,
			     uint64_t tkoid);
ssize_t ref_fxt_write_kernel_object(void *buf, size_t cap, uint8_t obj_type, uint64_t koid,
				    const struct ref_fxt_str *name);
ssize_t ref_fxt_write_backtrace(void *buf, size_t cap, const struct ref_fxt_who *who,
				uint64_t ticks, const uint64_t *ips, size_t nr_ips);
ssize_t ref_fxt_write_module(void *buf, size_t cap, const struct ref_fxt_who *who,
			     uint64_t ticks, uint16_t module_id, const char *name,
			     uint8_t name_len, const uint8_t *build_id, uint8_t build_id_len);
ssize_t ref_fxt_write_mmap(void *buf, size_t cap, const struct ref_fxt_who *who,
			   uint64_t ticks, uint16_t module_id, uint8_t flags, uint64_t start,
			   uint64_t range, uint64_t vaddr);
/* The REF_FXT_USER_REGS_NAME blob (fxt_format.h) for the backtrace written next. */
ssize_t ref_fxt_write_user_regs(void *buf, size_t cap, uint32_t abi, const uint64_t *regs,
				size_t nr_regs, const void *stack, size_t stack_len);

#endif /* PECS_STREAM_FXT_WRITER_H */
