/* The loader and storer for size-versioned structs (pecs/opts.h). */
#include <errno.h>
#include <string.h>

#include "pecs/opts.h"

/* Sizes below the size member itself cannot hold a version; min_size covers that too,
 * but a caller passing 0 as min_size should not make us read past what it has. */
static int check_size(size_t size, size_t min_size)
{
	if (size < min_size || size < sizeof(size_t))
		return -EINVAL;
	if (size > PECS_OPTS_MAX)
		return -E2BIG;
	return 0;
}

int pecs_opts_check(const void *caller, size_t ours_size, size_t min_size)
{
	const unsigned char *c = caller;
	size_t size;
	int err;

	if (!caller)
		return -EINVAL;
	size = pecs_opts_size(caller);
	err = check_size(size, min_size);
	if (err)
		return err;
	for (size_t i = ours_size; i < size; i++)
		if (c[i])
			return -E2BIG;
	return 0;
}

int pecs_opts_load(void *ours, size_t ours_size, const void *caller, size_t min_size)
{
	const unsigned char *c = caller;
	size_t size;
	int err = pecs_opts_check(caller, ours_size, min_size);

	if (err)
		return err;
	size = pecs_opts_size(caller);
	if (size > ours_size)
		size = ours_size;
	memcpy((unsigned char *)ours + sizeof(size_t), c + sizeof(size_t),
	       size - sizeof(size_t));
	memcpy(ours, &ours_size, sizeof(size_t));
	return 0;
}

int pecs_opts_store(void *caller, const void *ours, size_t ours_size, size_t min_size)
{
	unsigned char *c = caller;
	size_t size, n;
	int err;

	if (!caller)
		return -EINVAL;
	size = pecs_opts_size(caller);
	err = check_size(size, min_size);
	if (err)
		return err;
	n = size < ours_size ? size : ours_size;
	memcpy(c + sizeof(size_t), (const unsigned char *)ours + sizeof(size_t),
	       n - sizeof(size_t));
	if (size > n)
		memset(c + n, 0, size - n);
	return 0;
}
