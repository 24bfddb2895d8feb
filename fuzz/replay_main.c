/* Runs a fuzz target's inputs without libFuzzer, so an ordinary build (gcc, no
 * sanitizer) replays the seed corpus as a test.
 *
 *   replay PATH...
 * Each PATH is a file holding one input, a directory of such files, or a bundle written
 * by make_seeds.py (name ending in ".seeds": a u32 little-endian length before each
 * input). A target that finds a fault abort()s; this prints the count and fails when
 * there was nothing to run, so a missing corpus cannot pass.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t nr_inputs;

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

static void run_one(const uint8_t *data, size_t len)
{
	/* A copy of exactly len bytes, as libFuzzer hands inputs over. */
	uint8_t *copy = malloc(len ? len : 1);

	if (!copy)
		abort();
	memcpy(copy, data, len);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
	nr_inputs++;
}

static int run_bundle(const uint8_t *buf, size_t len, const char *path)
{
	size_t off = 0;

	while (off < len) {
		uint32_t n;

		if (len - off < 4)
			goto bad;
		n = (uint32_t)buf[off] | (uint32_t)buf[off + 1] << 8 |
		    (uint32_t)buf[off + 2] << 16 | (uint32_t)buf[off + 3] << 24;
		off += 4;
		if (n > len - off)
			goto bad;
		run_one(buf + off, n);
		off += n;
	}
	return 0;
bad:
	fprintf(stderr, "%s: truncated bundle at byte %zu\n", path, off);
	return -1;
}

static int run_path(const char *path)
{
	size_t len, plen = strlen(path);
	DIR *d = opendir(path);
	uint8_t *buf;
	int ret = 0;

	if (d) {
		struct dirent *de;

		while ((de = readdir(d))) {
			char sub[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			if (run_path(sub))
				ret = -1;
		}
		closedir(d);
		return ret;
	}
	buf = slurp(path, &len);
	if (!buf) {
		perror(path);
		return -1;
	}
	if (plen > 6 && strcmp(path + plen - 6, ".seeds") == 0)
		ret = run_bundle(buf, len, path);
	else
		run_one(buf, len);
	free(buf);
	return ret;
}

int main(int argc, char **argv)
{
	int failed = 0;

	for (int i = 1; i < argc; i++)
		if (run_path(argv[i]))
			failed = 1;
	printf("%zu inputs replayed\n", nr_inputs);
	if (nr_inputs == 0) {
		fprintf(stderr, "no inputs: nothing was checked\n");
		return 1;
	}
	return failed;
}
