/* Streaming FXT reader: push chunks of any size, get samples through the sink.
 *
 * One pass over the bytes. A record that arrives whole is decoded in place; one split
 * across pushes is gathered in a buffer that grows to that record's size (at most the
 * largest ordinary record, 0xfff words). The string table and its text grow as far as
 * the stream's string records reach, so a reader costs a few KiB until the stream needs
 * more. Records pecs does not decode (unknown types, large records, unknown profiler
 * subtypes) are passed over by their size without being buffered.
 */
#ifndef PECS_STREAM_FXT_READER_H
#define PECS_STREAM_FXT_READER_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/stream/stream.h"

struct ref_fxt_reader;

int ref_fxt_reader_new(struct ref_fxt_reader **out, const struct ref_stream_target *target);
void ref_fxt_reader_free(struct ref_fxt_reader *r);

/* 0, -EBADMSG on malformed input, -ENOMEM (REF_STREAM_E_NOMEM) when a table cannot
 * grow, or the sink's negative return. Sticky. */
int ref_fxt_reader_feed(struct ref_fxt_reader *r, const void *data, size_t len);
/* End of stream: a record left incomplete is REF_STREAM_E_TRUNCATED (-EBADMSG). */
int ref_fxt_reader_finish(struct ref_fxt_reader *r);

void ref_fxt_reader_error(const struct ref_fxt_reader *r, struct ref_stream_error *err);
void ref_fxt_reader_stats(const struct ref_fxt_reader *r, struct ref_stream_stats *stats);

/* ticks -> ns with the stream's init record (1 tick = 1 ns without one). */
uint64_t ref_fxt_ticks_to_ns(uint64_t ticks, uint64_t ticks_per_second);

#endif /* PECS_STREAM_FXT_READER_H */
