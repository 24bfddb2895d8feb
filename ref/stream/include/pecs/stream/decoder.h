/* A profiler stream of either kind: detects the format from the first 8 bytes (the FXT
 * magic record, else symbolizer markup) unless told, then forwards to that reader.
 * Detection works across chunk boundaries and on streams shorter than 8 bytes.
 */
#ifndef PECS_STREAM_DECODER_H
#define PECS_STREAM_DECODER_H

#include <stddef.h>
#include <stdint.h>

#include "pecs/profiler_stream.h"
#include "pecs/stream/stream.h"

struct ref_stream_decoder;

/* The format a stream's first bytes select: PECS_STREAM_FXT when they are (a prefix of)
 * the magic word, PECS_STREAM_MARKUP when they cannot be, PECS_STREAM_DETECT while
 * len < 8 leaves it open. */
enum pecs_stream_format ref_stream_detect(const void *data, size_t len);

int ref_stream_decoder_new(struct ref_stream_decoder **out, enum pecs_stream_format format,
			   const struct ref_stream_target *target);
void ref_stream_decoder_free(struct ref_stream_decoder *d);
int ref_stream_decoder_feed(struct ref_stream_decoder *d, const void *data, size_t len);
/* An empty stream is fine (no samples); a stream that stopped inside the magic word is
 * an FXT stream truncated at offset 0. */
int ref_stream_decoder_finish(struct ref_stream_decoder *d);
/* The format in use; PECS_STREAM_DETECT until decided. */
enum pecs_stream_format ref_stream_decoder_format(const struct ref_stream_decoder *d);
void ref_stream_decoder_error(const struct ref_stream_decoder *d, struct ref_stream_error *err);
void ref_stream_decoder_stats(const struct ref_stream_decoder *d,
			      struct ref_stream_stats *stats);

#endif /* PECS_STREAM_DECODER_H */
