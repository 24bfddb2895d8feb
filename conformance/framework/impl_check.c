/* Refusing a vtable the suite cannot read safely, and feature names docs/features.txt
 * does not list (compiled in by features_gen.sh): a misspelt name would otherwise turn
 * a case UNSUPPORTED, or an implementation's claim into nothing, without a word. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conformance/framework/impl_check.h"
#include "pecs/opts.h"

int pecs_feature_known(const char *name, size_t len)
{
	for (const char *const *f = pecs_known_features; *f; f++)
		if (strlen(*f) == len && memcmp(*f, name, len) == 0)
			return 1;
	return 0;
}


int pecs_impl_check(const struct pecs_impl *impl, char *msg, size_t msglen)
{
	if (!impl) {
		snprintf(msg, msglen, "no implementation (NULL vtable)");
		return -EINVAL;
	}
	/* The pecs/opts.h rule, read in place: the first version ended before host_facts;
	 * entries the suite does not know yet must be absent, or old suites would ignore
	 * behaviour the implementation depends on. */
	const size_t min_size = offsetof(struct pecs_impl, host_facts);

	if (impl->size < min_size) {
		snprintf(msg, msglen,
			 "vtable size %zu is smaller than the first version's mandatory part (%zu)",
			 impl->size, min_size);
		return -EINVAL;
	}
	/* Every version of the struct is a run of pointers after size_t; anything else is not
	 * a pecs_impl at all, and its tail is not read (a size that is not any version's may
	 * not describe memory the caller owns). */
	if (impl->size % sizeof(void *) || impl->size > PECS_OPTS_MAX) {
		snprintf(msg, msglen, "vtable size %zu is not the size of any struct pecs_impl "
			 "(a multiple of %zu, at most %d)", impl->size, sizeof(void *),
			 PECS_OPTS_MAX);
		return -EINVAL;
	}
	if (pecs_opts_check(impl, sizeof(*impl), min_size)) {
		const unsigned char *bytes = (const unsigned char *)impl;
		size_t i = sizeof(*impl);

		while (i < impl->size && !bytes[i])
			i++;
		snprintf(msg, msglen,
			 "vtable is %zu bytes and byte %zu, past the %zu this suite knows, is "
			 "not zero: rebuild the suite with a newer pecs/impl.h",
			 impl->size, i, sizeof(*impl));
		return -EINVAL;
	}
	if (!impl->name || !impl->open || !impl->close || !impl->read || !impl->ioctl ||
	    !impl->mmap || !impl->munmap || !impl->poll || !impl->setup || !impl->teardown) {
		snprintf(msg, msglen, "vtable '%s' lacks a mandatory entry (name, setup, teardown, "
			 "open, close, read, ioctl, mmap, munmap and poll are required)",
			 impl->name ? impl->name : "?");
		return -EINVAL;
	}
	for (const char *const *f = impl->features; f && *f; f++) {
		if (!pecs_feature_known(*f, strlen(*f))) {
			snprintf(msg, msglen, "vtable '%s' claims feature '%s', which docs/features.txt "
				 "does not list", impl->name, *f);
			return -EINVAL;
		}
	}
	return 0;
}
