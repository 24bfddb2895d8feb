#include "pecs/toolkit/counting.h"
#include "pecs/toolkit/wait.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

void pecs_cnt_attr(struct pecs_t *t, struct pecs_attr *attr, uint64_t config, uint64_t rf)
{
	pecs_attr_counting(t, attr, config);
	attr->read_format = rf;
}

uint64_t pecs_cnt_format_16k(struct pecs_t *t, uint32_t *fit)
{
	uint64_t rf = PECS_FORMAT_GROUP | PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_ID;
	uint32_t entry = 16;

	if (pecs_claims(t, "read.lost")) {
		rf |= PECS_FORMAT_LOST;
		entry = 24;
	}
	*fit = (PECS_READ_SIZE_MAX - 16) / entry;
	return rf;
}

int pecs_cnt_full_group_at(struct pecs_t *t, const char *file, int line, struct pecs_attr *attr,
			   uint32_t *fit)
{
	uint64_t rf = pecs_cnt_format_16k(t, fit);
	struct rlimit lim;
	int leader, ret;

	/* a raise only, toward the hard limit: harmless to the cases after this one */
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < *fit + 64 &&
	    lim.rlim_max >= *fit + 64) {
		lim.rlim_cur = *fit + 64;
		setrlimit(RLIMIT_NOFILE, &lim);
	}
	pecs_cnt_attr(t, attr, PECS_SW_CPU_CLOCK, rf);
	leader = pecs_open_safe(t, file, line, attr, 0, -1, -1, 0);
	for (uint32_t n = 1; n < *fit; n++) {
		ret = pecs_open(t, attr, 0, -1, leader, 0);
		if (ret == -EMFILE || ret == -ENFILE)
			pecs_end(t, PECS_ENV_SKIP, file, line,
				 "out of fds at event %u: raise RLIMIT_NOFILE above %u", n + 1,
				 *fit + 16);
		if (ret < 0)
			pecs_end(t, PECS_FAIL, file, line, "perf_event_open of member %u of %u: %s",
				 n + 1, *fit, pecs_retname(ret));
	}
	return leader;
}

struct pecs_attr *pecs_cnt_big_attr(struct pecs_t *t, uint64_t config, size_t *len)
{
	/* 64 KiB is the largest base page of the architectures Linux runs perf on */
	static union {
		struct pecs_attr attr;
		unsigned char bytes[65536 + 64];
	} big;

	if (pecs_host(t)->page_size <= 0 ||
	    (size_t)pecs_host(t)->page_size + 8 > sizeof(big.bytes))
		return NULL;
	memset(&big, 0, sizeof(big));
	pecs_attr_counting(t, &big.attr, config);
	*len = sizeof(big.bytes);
	return &big.attr;
}

int pecs_cnt_open_group(struct pecs_t *t, uint64_t rf, uint32_t nr, int *fds, uint64_t *ids)
{
	struct pecs_attr attr;
	uint32_t i;
	int err;

	for (i = 0; i < nr; i++) {
		pecs_cnt_attr(t, &attr, PECS_SW_TASK_CLOCK, rf);
		if (i > 0)
			attr.flags &= ~PECS_ATTR_DISABLED;
		fds[i] = pecs_open(t, &attr, 0, -1, i ? fds[0] : -1, 0);
		if (fds[i] < 0)
			return fds[i];
		if (ids) {
			err = pecs_event_id(t, fds[i], &ids[i]);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

int pecs_cnt_run(struct pecs_t *t, int fd, unsigned long ioc_arg, uint64_t ns)
{
	int err = pecs_ioctl(t, fd, PECS_IOC_ENABLE, ioc_arg);

	if (err < 0)
		return err;
	pecs_burn_user(ns);
	err = pecs_ioctl(t, fd, PECS_IOC_DISABLE, ioc_arg);
	return err < 0 ? err : 0;
}

/* Bytes of the header (nr, times) and of one member entry. */
static size_t head_size(uint64_t rf)
{
	return 8 * (!!(rf & PECS_FORMAT_GROUP) + !!(rf & PECS_FORMAT_TOTAL_TIME_ENABLED) +
		    !!(rf & PECS_FORMAT_TOTAL_TIME_RUNNING));
}

static size_t entry_size(uint64_t rf)
{
	return 8 * (1 + !!(rf & PECS_FORMAT_ID) + !!(rf & PECS_FORMAT_LOST));
}

size_t pecs_cnt_read_size(uint64_t rf, uint32_t nr)
{
	if (!(rf & PECS_FORMAT_GROUP))
		nr = 1;
	return head_size(rf) + nr * entry_size(rf);
}

/* Offset of an entry field (value, id, lost) inside one entry, or -1. */
static long entry_offset(uint64_t rf, const char *field)
{
	if (!strcmp(field, "value"))
		return 0;
	if (!strcmp(field, "id"))
		return rf & PECS_FORMAT_ID ? 8 : -1;
	if (!strcmp(field, "lost"))
		return rf & PECS_FORMAT_LOST ? 8 + 8 * !!(rf & PECS_FORMAT_ID) : -1;
	return -1;
}

long pecs_cnt_offset(uint64_t rf, uint32_t nr, const char *field)
{
	long te = !!(rf & PECS_FORMAT_TOTAL_TIME_ENABLED);
	long tr = !!(rf & PECS_FORMAT_TOTAL_TIME_RUNNING);
	/* the times follow the first u64: the value of a single read, nr of a group read */
	const long times = 8;
	unsigned int member;
	int used = 0;

	if (!strcmp(field, "nr"))
		return rf & PECS_FORMAT_GROUP ? 0 : -1;
	if (!strcmp(field, "time_enabled"))
		return te ? times : -1;
	if (!strcmp(field, "time_running"))
		return tr ? times + 8 * te : -1;
	if (!(rf & PECS_FORMAT_GROUP)) {
		long off = entry_offset(rf, field);

		/* id and lost follow the times */
		return off > 0 ? off + 8 * (te + tr) : off;
	}
	/* member[i].name: the ith entry after the header, leader first */
	if (sscanf(field, "member[%u].%n", &member, &used) != 1 || used == 0 || member >= nr)
		return -1;
	if (entry_offset(rf, field + used) < 0)
		return -1;
	return (long)(head_size(rf) + member * entry_size(rf)) + entry_offset(rf, field + used);
}

const struct pecs_vec_read_format *pecs_cnt_vec(uint64_t rf, uint32_t nr)
{
	size_t i;

	for (i = 0; i < pecs_vec_read_formats_count; i++) {
		const struct pecs_vec_read_format *v = &pecs_vec_read_formats[i];

		if (v->read_format == rf && v->nr_members == nr)
			return v;
	}
	return NULL;
}

long pecs_cnt_vec_offset(const struct pecs_vec_read_format *v, const char *field)
{
	uint32_t i;

	for (i = 0; i < v->nr_fields; i++)
		if (!strcmp(v->fields[i].name, field))
			return v->fields[i].offset;
	return -1;
}

int pecs_cnt_vec_agrees(const struct pecs_vec_read_format *v, char *msg, size_t msglen)
{
	size_t want = pecs_cnt_read_size(v->read_format, v->nr_members);
	size_t covered = 0;
	uint32_t i;

	if (v->size != want) {
		snprintf(msg, msglen, "tcId %d: vector size %u, rule gives %zu", v->tc_id,
			 v->size, want);
		return -EINVAL;
	}
	for (i = 0; i < v->nr_fields; i++) {
		const struct pecs_vec_field *f = &v->fields[i];
		long off = pecs_cnt_offset(v->read_format, v->nr_members, f->name);

		if (off < 0 || (uint32_t)off != f->offset || f->size != 8) {
			snprintf(msg, msglen, "tcId %d: field %s at %u size %u, rule gives %ld size 8",
				 v->tc_id, f->name, f->offset, f->size, off);
			return -EINVAL;
		}
		covered += f->size;
	}
	/* every byte of the read belongs to exactly one named field */
	if (covered != want) {
		snprintf(msg, msglen, "tcId %d: fields cover %zu of %zu bytes", v->tc_id, covered,
			 want);
		return -EINVAL;
	}
	return 0;
}

uint64_t pecs_cnt_u64(const void *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)buf + off, sizeof(v));
	return v;
}

pid_t pecs_cnt_dead_pid(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return pid;
}
