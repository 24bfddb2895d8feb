/* perf_get_page_size() walks the page tables; from user space the mapping's entry in
 * /proc/<task>/smaps gives the page size (KernelPageSize, the hugetlb size for hugetlb
 * mappings) and how much of it is PMD-mapped, and /proc/<task>/pagemap says whether a
 * page is present at all. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref/host/host.h"

#define PAGEMAP_PRESENT (1ull << 63)

struct vma_sizes {
	uint64_t start, end;
	uint64_t kernel_page_kb, rss_kb, pmd_kb;
	int found;
};

/* The smaps entry of the mapping holding addr. */
static void find_vma(pid_t task, uint64_t addr, struct vma_sizes *v)
{
	char file[64], *line = NULL, key[64];
	uint64_t start, end, kb;
	size_t len = 0;
	int in = 0;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/smaps", (int)task);
	f = fopen(file, "re");
	if (!f)
		return;
	while (getline(&line, &len, f) > 0) {
		/* A mapping's first line starts with its range, "start-end perms ...". */
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " ", &start, &end) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			if (in)
				break;
			in = addr >= start && addr < end;
			if (in) {
				v->found = 1;
				v->start = start;
				v->end = end;
			}
			continue;
		}
		if (!in || sscanf(line, "%63[^:]: %" SCNu64 " kB", key, &kb) != 2)
			continue;
		if (!strcmp(key, "KernelPageSize"))
			v->kernel_page_kb = kb;
		else if (!strcmp(key, "Rss"))
			v->rss_kb = kb;
		else if (!strcmp(key, "AnonHugePages") || !strcmp(key, "ShmemPmdMapped") ||
			 !strcmp(key, "FilePmdMapped"))
			v->pmd_kb += kb;
	}
	free(line);
	fclose(f);
}

/* 1 present, 0 not present, -1 when pagemap cannot tell. */
static int page_present(pid_t task, uint64_t addr, uint64_t base)
{
	char file[64];
	uint64_t entry;
	int fd;
	ssize_t n;

	snprintf(file, sizeof(file), "/proc/%d/pagemap", (int)task);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = pread(fd, &entry, sizeof(entry), (off_t)(addr / base * sizeof(entry)));
	close(fd);
	if (n != (ssize_t)sizeof(entry))
		return -1;
	return (entry & PAGEMAP_PRESENT) != 0;
}

static uint64_t pmd_size(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Called per sample, and samples of one task land in the same few mappings: the
 * mapping last looked up is kept, so the next ip inside it skips the smaps walk (the
 * expensive part: the kernel measures every mapping before the one wanted). */
static uint64_t mapping_page_size(struct ref_host_cache *c, pid_t task, uint64_t addr,
				  uint64_t base)
{
	struct vma_sizes v = {0};
	uint64_t size;

	if (c->page_task == task && addr >= c->page_start && addr < c->page_end)
		return c->page_size;
	find_vma(task, addr, &v);
	if (!v.found)
		return 0;
	size = v.kernel_page_kb ? v.kernel_page_kb * 1024 : base;
	if (size == base && v.rss_kb && v.pmd_kb >= v.rss_kb && pmd_size())
		size = pmd_size();
	/* A mapping with huge pages in it can gain or lose them at any time: ask again. */
	if (v.pmd_kb)
		return size;
	c->page_task = task;
	c->page_start = v.start;
	c->page_end = v.end;
	c->page_size = size;
	return size;
}

uint64_t ref_host_page_size(struct ref_host_cache *c, pid_t task, uint64_t addr)
{
	uint64_t base = (uint64_t)sysconf(_SC_PAGESIZE), size;

	if (!addr)
		return 0;
	size = mapping_page_size(c, task, addr, base);
	/* An unreadable pagemap leaves the page assumed present: a sample's ip was just
	 * executed. */
	if (!size || page_present(task, addr, base) == 0)
		return 0;
	return size;
}
