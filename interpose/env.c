/* The interposer leaves the programs its host starts alone: at load it takes itself out
 * of LD_PRELOAD, so a workload that perf stat or perf record executes runs as it would
 * without it (loading the library and the engine's own dependencies into the workload
 * measured 80 more page faults in a run of sh than the kernel counts for it).
 * PECS_INTERPOSE_CHILDREN=1 keeps it in, for a program whose children open events. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "pecs/interpose.h"

/* 1 when entry names the object at path: the same path, or the same file name. */
static int names_me(const char *entry, size_t len, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strlen(path) == len && strncmp(entry, path, len) == 0)
		return 1;
	size_t blen = strlen(base);

	return len >= blen && strncmp(entry + len - blen, base, blen) == 0 &&
	       (len == blen || entry[len - blen - 1] == '/');
}

__attribute__((constructor)) static void ip_env_init(void)
{
	const char *pre = getenv("LD_PRELOAD");
	const char *keep = getenv(PECS_INTERPOSE_CHILDREN_ENV);
	Dl_info me;
	char out[4096];
	size_t n = 0;
	int found = 0;

	if (!pre || (keep && strcmp(keep, "1") == 0) ||
	    !dladdr((void *)ip_env_init, &me) || !me.dli_fname || strlen(pre) >= sizeof(out))
		return;
	/* LD_PRELOAD separates its entries with spaces or colons. */
	for (const char *p = pre; *p;) {
		size_t len = strcspn(p, " :");

		if (len && names_me(p, len, me.dli_fname)) {
			found = 1;
		} else if (len) {
			if (n)
				out[n++] = ' ';
			memcpy(out + n, p, len);
			n += len;
		}
		p += len;
		p += *p != 0;
	}
	out[n] = 0;
	if (!found)
		return;
	if (n)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
}
