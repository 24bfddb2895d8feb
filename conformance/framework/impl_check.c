/* Refusing a vtable the suite cannot read safely. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runner.h"

int pecs_impl_check(const struct pecs_impl *impl, char *msg, size_t msglen)
{
	if (!impl) {
		snprintf(msg, msglen, "no implementation (NULL vtable)");
		return -EINVAL;
	}
	if (impl->size < offsetof(struct pecs_impl, host_facts)) {
		snprintf(msg, msglen,
			 "vtable size %zu is smaller than the first version's mandatory part (%zu)",
			 impl->size, offsetof(struct pecs_impl, host_facts));
		return -EINVAL;
	}
	/* Every version of the struct is a run of pointers after size_t; anything else is not
	 * a pecs_impl at all. The cap bounds the trailing-zero scan below. */
	if (impl->size % sizeof(void *) || impl->size > 4096) {
		snprintf(msg, msglen, "vtable size %zu is not the size of any struct pecs_impl "
			 "(a multiple of %zu, at most 4096)", impl->size, sizeof(void *));
		return -EINVAL;
	}
	/* Entries the suite does not know yet must be absent, or old suites would ignore
	 * behaviour the implementation depends on. */
	const unsigned char *bytes = (const unsigned char *)impl;
	for (size_t i = sizeof(struct pecs_impl); i < impl->size; i++) {
		if (bytes[i]) {
			snprintf(msg, msglen,
				 "vtable is %zu bytes and byte %zu, past the %zu this suite knows, is "
				 "not zero: rebuild the suite with a newer pecs/impl.h",
				 impl->size, i, sizeof(struct pecs_impl));
			return -EINVAL;
		}
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
