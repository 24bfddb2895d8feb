/* Symbolizer-markup writer, in the shape Fuchsia's profiler emits. Formats digits by hand
 * into the caller's buffer (no stdio, no allocation), so a signal handler may call it.
 * Each function returns the bytes written or -ENOSPC.
 */
#ifndef PECS_STREAM_MARKUP_WRITER_H
#define PECS_STREAM_MARKUP_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum ref_markup_frame_kind {
	REF_MARKUP_FRAME_BARE = 0, /* {{{bt:N:0xADDR}}} */
	REF_MARKUP_FRAME_PC = 1,
	REF_MARKUP_FRAME_RA = 2,
};

ssize_t ref_markup_write_reset(char *buf, size_t cap);
/* The "<pid>\n<tid>\n" pair that opens a sample. */
ssize_t ref_markup_write_ids(char *buf, size_t cap, uint64_t pid, uint64_t tid);
ssize_t ref_markup_write_frame(char *buf, size_t cap, unsigned index, uint64_t addr,
			       enum ref_markup_frame_kind kind);
/* A whole sample: ids, then frame 0 as pc and the rest as ra. */
ssize_t ref_markup_write_sample(char *buf, size_t cap, uint64_t pid, uint64_t tid,
				const uint64_t *ips, size_t nr_ips);
ssize_t ref_markup_write_module(char *buf, size_t cap, unsigned id, const char *name,
				const uint8_t *build_id, size_t build_id_len);
/* flags: ELF p_flags bits (4 r, 2 w, 1 x). */
ssize_t ref_markup_write_mmap(char *buf, size_t cap, uint64_t start, uint64_t size,
			      unsigned module_id, unsigned flags, uint64_t vaddr);

#endif /* PECS_STREAM_MARKUP_WRITER_H */
