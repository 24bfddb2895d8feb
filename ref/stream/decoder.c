#include "pecs/stream/decoder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pecs/stream/fxt_format.h"
#include "pecs/stream/fxt_reader.h"
#include "pecs/stream/markup_reader.h"

struct ref_stream_decoder {
	struct ref_stream_target target; /* observer points at our copy below */
	struct ref_stream_observer observer;
	enum pecs_stream_format format;
	struct ref_fxt_reader *fxt;
	struct ref_markup_reader *markup;
	/* Bytes held back while the first 8 decide the format. */
	uint8_t head[8];
	size_t head_len;
	struct ref_stream_error err;
};

enum pecs_stream_format ref_stream_detect(const void *data, size_t len)
{
	const uint8_t *b = data;
	size_t n = len < 8 ? len : 8;

	/* The stream's bytes against the magic word's, little-endian, as far as it goes. */
	for (size_t i = 0; i < n; i++)
		if (b[i] != (uint8_t)(PECS_FXT_MAGIC_WORD >> (8 * i)))
			return PECS_STREAM_MARKUP;
	return n == 8 ? PECS_STREAM_FXT : PECS_STREAM_DETECT;
}

int ref_stream_decoder_new(struct ref_stream_decoder **out, enum pecs_stream_format format,
			   const struct ref_stream_target *target)
{
	struct ref_stream_decoder *d;
	struct ref_stream_target t;
	struct ref_stream_observer o;
	int err = ref_stream_target_load(&t, &o, target);

	if (err || !out)
		return err ? err : -EINVAL;
	if (format != PECS_STREAM_DETECT && format != PECS_STREAM_FXT &&
	    format != PECS_STREAM_MARKUP)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->target = t;
	d->observer = o;
	if (t.observer)
		d->target.observer = &d->observer;
	d->format = format;
	*out = d;
	return 0;
}

void ref_stream_decoder_free(struct ref_stream_decoder *d)
{
	if (!d)
		return;
	ref_fxt_reader_free(d->fxt);
	ref_markup_reader_free(d->markup);
	free(d);
}

static int open_reader(struct ref_stream_decoder *d)
{
	if (d->format == PECS_STREAM_FXT && !d->fxt)
		return ref_fxt_reader_new(&d->fxt, &d->target);
	if (d->format == PECS_STREAM_MARKUP && !d->markup)
		return ref_markup_reader_new(&d->markup, &d->target);
	return 0;
}

static int forward(struct ref_stream_decoder *d, const void *data, size_t len)
{
	int ret = open_reader(d);

	if (ret)
		return ret;
	if (d->fxt)
		return ref_fxt_reader_feed(d->fxt, data, len);
	return ref_markup_reader_feed(d->markup, data, len);
}

int ref_stream_decoder_feed(struct ref_stream_decoder *d, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t take;
	int ret;

	if (d->format != PECS_STREAM_DETECT)
		return forward(d, data, len);
	take = 8 - d->head_len < len ? 8 - d->head_len : len;
	memcpy(d->head + d->head_len, p, take);
	d->head_len += take;
	d->format = ref_stream_detect(d->head, d->head_len);
	if (d->format == PECS_STREAM_DETECT)
		return 0;
	ret = forward(d, d->head, d->head_len);
	if (ret || len == take)
		return ret;
	return forward(d, p + take, len - take);
}

int ref_stream_decoder_finish(struct ref_stream_decoder *d)
{
	int ret;

	if (d->format == PECS_STREAM_DETECT) {
		if (d->head_len == 0)
			return 0;
		/* A strict prefix of the magic word can only be a cut-off FXT stream. */
		d->format = PECS_STREAM_FXT;
		ret = forward(d, d->head, d->head_len);
		if (ret)
			return ret;
	}
	ret = open_reader(d);
	if (ret)
		return ret;
	if (d->fxt)
		return ref_fxt_reader_finish(d->fxt);
	return ref_markup_reader_finish(d->markup);
}

enum pecs_stream_format ref_stream_decoder_format(const struct ref_stream_decoder *d)
{
	return d->format;
}

void ref_stream_decoder_error(const struct ref_stream_decoder *d, struct ref_stream_error *err)
{
	if (d->fxt)
		ref_fxt_reader_error(d->fxt, err);
	else if (d->markup)
		ref_markup_reader_error(d->markup, err);
	else
		*err = d->err;
}

void ref_stream_decoder_stats(const struct ref_stream_decoder *d, struct ref_stream_stats *stats)
{
	if (d->fxt) {
		ref_fxt_reader_stats(d->fxt, stats);
	} else if (d->markup) {
		ref_markup_reader_stats(d->markup, stats);
	} else if (stats) {
		memset(stats, 0, sizeof(*stats));
	}
}
