/* Streaming symbolizer-markup reader (llvm docs/SymbolizerMarkupFormat.rst, as Fuchsia's
 * profiler writes it): a pid line, a tid line, then {{{bt:N:0xADDR[:pc|ra]}}} frames make
 * one sample; {{{reset}}}, {{{module:...}}} and {{{mmap:...}}} lines are understood.
 *
 * Lines are parsed only once their newline has arrived, however the bytes were chunked.
 * A sample is complete when the next pid line, a frame 0, a reset, or the end of the
 * stream closes its block; a block cut off by an error is never delivered.
 */
#ifndef PECS_STREAM_MARKUP_READER_H
#define PECS_STREAM_MARKUP_READER_H

#include <stddef.h>

#include "pecs/stream/stream.h"

/* Longest line kept across pushes; markup lines are short, so longer is malformed. */
#define REF_MARKUP_MAX_LINE 4096u

struct ref_markup_reader;

int ref_markup_reader_new(struct ref_markup_reader **out,
			  const struct ref_stream_target *target);
void ref_markup_reader_free(struct ref_markup_reader *r);
int ref_markup_reader_feed(struct ref_markup_reader *r, const void *data, size_t len);
/* End of stream: delivers the open block; an unterminated last line is
 * REF_STREAM_E_TRUNCATED. */
int ref_markup_reader_finish(struct ref_markup_reader *r);
void ref_markup_reader_error(const struct ref_markup_reader *r, struct ref_stream_error *err);
void ref_markup_reader_stats(const struct ref_markup_reader *r,
			     struct ref_stream_stats *stats);

#endif /* PECS_STREAM_MARKUP_READER_H */
