/* libFuzzer target: the stream decoder's format detection. The decoder left to detect
 * must give, in one push and in chunks, exactly what the reader for the format its
 * first bytes select gives on its own (stream_diff.h has the input layout). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pecs/stream/decoder.h"
#include "pecs/stream/fxt_reader.h"
#include "pecs/stream/markup_reader.h"
#include "stream_diff.h"

static int dec_create(void **p, const struct ref_stream_target *t, const void *arg)
{
	return ref_stream_decoder_new((struct ref_stream_decoder **)p,
				      *(const enum pecs_stream_format *)arg, t);
}

static int dec_feed(void *p, const void *data, size_t len)
{
	return ref_stream_decoder_feed(p, data, len);
}

static int dec_finish(void *p)
{
	return ref_stream_decoder_finish(p);
}

static void dec_error(void *p, struct ref_stream_error *err)
{
	ref_stream_decoder_error(p, err);
}

static void dec_stats(void *p, struct ref_stream_stats *st)
{
	ref_stream_decoder_stats(p, st);
}

static void dec_destroy(void *p)
{
	ref_stream_decoder_free(p);
}

static const struct fuzz_parser decoder = {
	"decoder", dec_create, dec_feed, dec_finish, dec_error, dec_stats, dec_destroy,
};

static int fxt_create(void **p, const struct ref_stream_target *t, const void *arg)
{
	(void)arg;
	return ref_fxt_reader_new((struct ref_fxt_reader **)p, t);
}

static int fxt_feed(void *p, const void *data, size_t len)
{
	return ref_fxt_reader_feed(p, data, len);
}

static int fxt_finish(void *p)
{
	return ref_fxt_reader_finish(p);
}

static void fxt_error(void *p, struct ref_stream_error *err)
{
	ref_fxt_reader_error(p, err);
}

static void fxt_stats(void *p, struct ref_stream_stats *st)
{
	ref_fxt_reader_stats(p, st);
}

static void fxt_destroy(void *p)
{
	ref_fxt_reader_free(p);
}

static const struct fuzz_parser fxt = {
	"fxt_reader", fxt_create, fxt_feed, fxt_finish, fxt_error, fxt_stats, fxt_destroy,
};

static int markup_create(void **p, const struct ref_stream_target *t, const void *arg)
{
	(void)arg;
	return ref_markup_reader_new((struct ref_markup_reader **)p, t);
}

static int markup_feed(void *p, const void *data, size_t len)
{
	return ref_markup_reader_feed(p, data, len);
}

static int markup_finish(void *p)
{
	return ref_markup_reader_finish(p);
}

static void markup_error(void *p, struct ref_stream_error *err)
{
	ref_markup_reader_error(p, err);
}

static void markup_stats(void *p, struct ref_stream_stats *st)
{
	ref_markup_reader_stats(p, st);
}

static void markup_destroy(void *p)
{
	ref_markup_reader_free(p);
}

static const struct fuzz_parser markup = {
	"markup_reader", markup_create, markup_feed, markup_finish,
	markup_error,    markup_stats,  markup_destroy,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum pecs_stream_format detect = PECS_STREAM_DETECT;
	struct fuzz_outcome whole, chunks, direct;
	const uint8_t *stream = data + 1;
	size_t len = size - 1;
	enum pecs_stream_format fmt;

	if (size == 0)
		return 0;
	fuzz_stream_run(&decoder, &detect, data[0], stream, len, 0, &whole);
	fuzz_stream_run(&decoder, &detect, data[0], stream, len, 1, &chunks);
	fuzz_outcome_require_same(&whole, &chunks, "decoder: one push vs chunks");

	/* A stream cut inside the magic word is an FXT stream truncated at 0. */
	fmt = len ? ref_stream_detect(stream, len) : PECS_STREAM_DETECT;
	if (fmt == PECS_STREAM_DETECT && len)
		fmt = PECS_STREAM_FXT;
	if (fmt != PECS_STREAM_DETECT) {
		fuzz_stream_run(fmt == PECS_STREAM_FXT ? &fxt : &markup, NULL, data[0], stream,
				len, 0, &direct);
		fuzz_outcome_require_same(&whole, &direct, "decoder vs the detected reader");
		fuzz_outcome_release(&direct);
	}
	fuzz_outcome_release(&whole);
	fuzz_outcome_release(&chunks);
	return 0;
}
