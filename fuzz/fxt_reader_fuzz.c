/* libFuzzer target: the FXT reader, one push against chunks (stream_diff.h). */
#include <stddef.h>
#include <stdint.h>

#include "pecs/stream/fxt_reader.h"
#include "stream_diff.h"

static int create(void **p, const struct ref_stream_target *t, const void *arg)
{
	(void)arg;
	return ref_fxt_reader_new((struct ref_fxt_reader **)p, t);
}

static int feed(void *p, const void *data, size_t len)
{
	return ref_fxt_reader_feed(p, data, len);
}

static int finish(void *p)
{
	return ref_fxt_reader_finish(p);
}

static void get_error(void *p, struct ref_stream_error *err)
{
	ref_fxt_reader_error(p, err);
}

static void stats(void *p, struct ref_stream_stats *st)
{
	ref_fxt_reader_stats(p, st);
}

static void destroy(void *p)
{
	ref_fxt_reader_free(p);
}

static const struct fuzz_parser fxt = {
	"fxt_reader", create, feed, finish, get_error, stats, destroy,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_stream_check(&fxt, NULL, data, size);
	return 0;
}
