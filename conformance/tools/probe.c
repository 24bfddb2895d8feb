/* Parsing and running one probe line; see probe.h. */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pecs/abi.h"

/* Big enough for the largest attr size the kernel accepts (one page) plus slack. */
#define ATTR_BUF 8192
#define MAX_MEMBERS 8

struct probe {
	char op[8];
	uint32_t type, size;
	uint64_t config, set, clear, sample_type, read_format, period;
	long pid, cpu;
	char group[12];      /* none, leader, member, devnull, bad */
	unsigned long oflags;
	unsigned tail;       /* a non-zero byte at this offset of the attr buffer (0: none) */
	unsigned members;    /* events in the group for read, leader included */
	unsigned long count; /* read buffer size */
	int badbuf;
	int sampling;
	unsigned long request, arg;
	char argkind[12];    /* value, ptr, badptr, selffd, otherfd, badfd */
	int mapped;
	unsigned pages;
	char prot[4];        /* r, rw, rwx */
	int private_map;
	long offset;
};

static const char *errname(int e)
{
	static const struct { int e; const char *n; } names[] = {
		{EPERM, "EPERM"}, {ENOENT, "ENOENT"}, {ESRCH, "ESRCH"}, {EINTR, "EINTR"},
		{EBADF, "EBADF"}, {EAGAIN, "EAGAIN"}, {ENOMEM, "ENOMEM"}, {EACCES, "EACCES"},
		{EFAULT, "EFAULT"}, {EBUSY, "EBUSY"}, {EEXIST, "EEXIST"}, {ENODEV, "ENODEV"},
		{EINVAL, "EINVAL"}, {EMFILE, "EMFILE"}, {ENOTTY, "ENOTTY"}, {ENOSPC, "ENOSPC"},
		{ESPIPE, "ESPIPE"}, {E2BIG, "E2BIG"}, {ENOSYS, "ENOSYS"}, {EOPNOTSUPP, "EOPNOTSUPP"},
		{EOVERFLOW, "EOVERFLOW"}, {ENXIO, "ENXIO"},
	};
	static char other[16];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].n;
	snprintf(other, sizeof(other), "E%d", e);
	return other;
}

static void put_ret(FILE *out, long r, const char *ok_word)
{
	if (r < 0)
		fprintf(out, "{\"ret\": \"-%s\"", errname((int)-r));
	else if (ok_word)
		fprintf(out, "{\"ret\": \"%s\"", ok_word);
	else
		fprintf(out, "{\"ret\": \"%ld\"", r);
}

static int parse_u64(const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 0);
	if (errno || !*v || *end)
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_long(const char *v, long *out)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 0);
	if (errno || !*v || *end)
		return -EINVAL;
	*out = x;
	return 0;
}

static int set_word(struct probe *p, const char *key, const char *v)
{
	uint64_t u = 0;
	long l = 0;
#define WORD(name) (strcmp(key, name) == 0)
#define COPY(field) (strlen(v) < sizeof(p->field) ? (strcpy(p->field, v), 0) : -EINVAL)
	if (WORD("op"))
		return COPY(op);
	if (WORD("group"))
		return COPY(group);
	if (WORD("argkind"))
		return COPY(argkind);
	if (WORD("prot"))
		return COPY(prot);
	if (WORD("pid") || WORD("cpu") || WORD("offset")) {
		if (parse_long(v, &l) < 0)
			return -EINVAL;
		*(WORD("pid") ? &p->pid : WORD("cpu") ? &p->cpu : &p->offset) = l;
		return 0;
	}
	static const char *const numeric[] = {
		"type", "size", "config", "set", "clear", "sample_type", "read_format", "period",
		"oflags", "tail", "members", "count", "badbuf", "sampling", "request", "arg",
		"mapped", "pages", "private",
	};
	size_t k = 0;
	while (k < sizeof(numeric) / sizeof(numeric[0]) && !WORD(numeric[k]))
		k++;
	if (k == sizeof(numeric) / sizeof(numeric[0]))
		return -ENOENT;
	if (parse_u64(v, &u) < 0)
		return -EINVAL;
	if (WORD("type")) p->type = (uint32_t)u;
	else if (WORD("size")) p->size = (uint32_t)u;
	else if (WORD("config")) p->config = u;
	else if (WORD("set")) p->set = u;
	else if (WORD("clear")) p->clear = u;
	else if (WORD("sample_type")) p->sample_type = u;
	else if (WORD("read_format")) p->read_format = u;
	else if (WORD("period")) p->period = u;
	else if (WORD("oflags")) p->oflags = (unsigned long)u;
	else if (WORD("tail")) p->tail = (unsigned)u;
	else if (WORD("members")) p->members = (unsigned)u;
	else if (WORD("count")) p->count = (unsigned long)u;
	else if (WORD("badbuf")) p->badbuf = u != 0;
	else if (WORD("sampling")) p->sampling = u != 0;
	else if (WORD("request")) p->request = (unsigned long)u;
	else if (WORD("arg")) p->arg = (unsigned long)u;
	else if (WORD("mapped")) p->mapped = u != 0;
	else if (WORD("pages")) p->pages = (unsigned)u;
	else if (WORD("private")) p->private_map = u != 0;
	else return -ENOENT;
	return 0;
#undef COPY
#undef WORD
}

static int parse(struct probe *p, const char *line, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	/* The defaults: a user-only, disabled task-clock counter this host lets anyone open. */
	p->type = PECS_TYPE_SOFTWARE;
	p->config = PECS_SW_TASK_CLOCK;
	p->size = PECS_ATTR_SIZE_LATEST;
	p->cpu = -1;
	strcpy(p->group, "none");
	strcpy(p->argkind, "value");
	strcpy(p->prot, "rw");
	p->members = 1;
	p->count = 4096;
	p->pages = 3;
	char buf[1024];
	if (strlen(line) >= sizeof(buf)) {
		snprintf(err, errlen, "probe line too long");
		return -EINVAL;
	}
	strcpy(buf, line);
	char *save = NULL;
	for (char *w = strtok_r(buf, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		char *eq = strchr(w, '=');
		if (!eq) {
			snprintf(err, errlen, "'%s' is not key=value", w);
			return -EINVAL;
		}
		*eq = 0;
		int rc = set_word(p, w, eq + 1);
		if (rc < 0) {
			snprintf(err, errlen, rc == -ENOENT ? "unknown key '%s'" : "bad value for '%s'", w);
			return -EINVAL;
		}
	}
	if (strcmp(p->op, "open") && strcmp(p->op, "read") && strcmp(p->op, "ioctl") &&
	    strcmp(p->op, "mmap")) {
		snprintf(err, errlen, "op must be open, read, ioctl or mmap");
		return -EINVAL;
	}
	if (p->members < 1 || p->members > MAX_MEMBERS || p->tail >= ATTR_BUF ||
	    p->count > 65536) {
		snprintf(err, errlen, "members, tail or count out of range");
		return -EINVAL;
	}
	return 0;
}

/* The attr a probe describes, in a zeroed buffer larger than any attr. */
static void build_attr(const struct probe *p, unsigned char *buf)
{
	struct pecs_attr *a = (struct pecs_attr *)buf;
	memset(buf, 0, ATTR_BUF);
	a->type = p->type;
	a->size = p->size;
	a->config = p->config;
	a->flags = PECS_ATTR_DISABLED | PECS_ATTR_EXCLUDE_KERNEL | PECS_ATTR_EXCLUDE_HV;
	if (p->sampling) {
		a->sample_period = 100000;
		a->sample_type = PECS_SAMPLE_IP;
	}
	if (p->period)
		a->sample_period = p->period;
	if (p->sample_type)
		a->sample_type = p->sample_type;
	a->read_format = p->read_format;
	a->flags = (a->flags | p->set) & ~p->clear;
	if (p->tail)
		buf[p->tail] = 1;
}

struct fds {
	int fd[MAX_MEMBERS + 2];
	int n;
	int extra; /* /dev/null and the like */
};

static void fds_close(const struct pecs_impl *impl, void *ctx, struct fds *f)
{
	for (int i = f->n - 1; i >= 0; i--)
		impl->close(ctx, f->fd[i]);
	if (f->extra >= 0)
		close(f->extra);
}

/* Opens the probe's event (and, for read, its group members). Returns the first fd or
 * -errno; fds collects what to close. */
static int open_events(const struct pecs_impl *impl, void *ctx, const struct probe *p,
		       unsigned char *attr, struct fds *f)
{
	int r = impl->open(ctx, (struct pecs_attr *)attr, (pid_t)p->pid, (int)p->cpu, -1,
			   p->oflags);
	if (r < 0)
		return r;
	f->fd[f->n++] = r;
	for (unsigned i = 1; i < p->members; i++) {
		unsigned char m[ATTR_BUF];
		build_attr(p, m);
		int fd = impl->open(ctx, (struct pecs_attr *)m, (pid_t)p->pid, (int)p->cpu,
				    f->fd[0], 0);
		if (fd < 0)
			return fd;
		f->fd[f->n++] = fd;
	}
	return f->fd[0];
}

static int group_fd(const struct pecs_impl *impl, void *ctx, const struct probe *p,
		    struct fds *f)
{
	if (strcmp(p->group, "none") == 0)
		return -1;
	if (strcmp(p->group, "bad") == 0)
		return 9999;
	if (strcmp(p->group, "devnull") == 0)
		return f->extra = open("/dev/null", O_RDONLY | O_CLOEXEC);
	unsigned char a[ATTR_BUF];
	struct probe plain = *p;
	plain.set = plain.clear = 0;
	plain.tail = 0;
	plain.size = PECS_ATTR_SIZE_LATEST;
	plain.type = PECS_TYPE_SOFTWARE;
	plain.config = PECS_SW_TASK_CLOCK;
	build_attr(&plain, a);
	int leader = impl->open(ctx, (struct pecs_attr *)a, 0, -1, -1, 0);
	if (leader < 0)
		return -1000 + leader; /* setup failed: reported below */
	f->fd[f->n++] = leader;
	if (strcmp(p->group, "leader") == 0)
		return leader;
	build_attr(&plain, a);
	int member = impl->open(ctx, (struct pecs_attr *)a, 0, -1, leader, 0);
	if (member < 0)
		return -1000 + member;
	f->fd[f->n++] = member;
	return member; /* "member": a member fd where a leader is wanted */
}

static void put_hex(FILE *out, const unsigned char *b, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x", b[i]);
	fputc('"', out);
}

static int run_open(const struct pecs_impl *impl, void *ctx, const struct probe *p, FILE *out)
{
	unsigned char attr[ATTR_BUF];
	struct fds f = {.extra = -1};
	int g = group_fd(impl, ctx, p, &f);
	if (g <= -1000) {
		fprintf(out, "{\"ret\": \"setup\", \"error\": \"-%s\"}\n", errname(-(g + 1000)));
		fds_close(impl, ctx, &f);
		return 0;
	}
	build_attr(p, attr);
	int r = impl->open(ctx, (struct pecs_attr *)attr, (pid_t)p->pid, (int)p->cpu, g, p->oflags);
	put_ret(out, r, "fd");
	/* E2BIG tells the caller the size the kernel wants by writing it into attr.size. */
	fprintf(out, ", \"attr_size\": %u}\n", ((struct pecs_attr *)attr)->size);
	if (r >= 0)
		impl->close(ctx, r);
	fds_close(impl, ctx, &f);
	return 0;
}

static int run_read(const struct pecs_impl *impl, void *ctx, const struct probe *p, FILE *out)
{
	unsigned char attr[ATTR_BUF];
	struct fds f = {.extra = -1};
	build_attr(p, attr);
	int fd = open_events(impl, ctx, p, attr, &f);
	if (fd < 0) {
		fprintf(out, "{\"ret\": \"setup\", \"error\": \"-%s\"}\n", errname(-fd));
		fds_close(impl, ctx, &f);
		return 0;
	}
	uint64_t ids[MAX_MEMBERS] = {0};
	for (int i = 0; i < f.n; i++)
		impl->ioctl(ctx, f.fd[i], PECS_IOC_ID, (unsigned long)&ids[i]);
	static unsigned char buf[65536];
	memset(buf, 0, sizeof(buf));
	long r = impl->read(ctx, fd, p->badbuf ? (void *)8 : buf, p->count);
	put_ret(out, r, NULL);
	if (r > 0 && !p->badbuf) {
		/* Ids are the kernel's global counter: mask them, say where they were. */
		fprintf(out, ", \"dynamic\": [");
		int first = 1;
		for (long off = 0; off + 8 <= r; off += 8) {
			uint64_t v;
			memcpy(&v, buf + off, 8);
			for (int i = 0; i < f.n; i++) {
				if (v == 0 || v != ids[i])
					continue;
				memset(buf + off, 0, 8);
				if (i == 0 && p->members == 1)
					fprintf(out, "%s{\"offset\": %ld, \"size\": 8, \"field\": \"id\"}",
						first ? "" : ", ", off);
				else
					fprintf(out, "%s{\"offset\": %ld, \"size\": 8, "
						"\"field\": \"member_id[%d]\"}", first ? "" : ", ", off, i);
				first = 0;
				break;
			}
		}
		fprintf(out, "], \"bytes\": ");
		put_hex(out, buf, (size_t)r);
	}
	fputs("}\n", out);
	fds_close(impl, ctx, &f);
	return 0;
}

static int run_ioctl(const struct pecs_impl *impl, void *ctx, const struct probe *p, FILE *out)
{
	unsigned char attr[ATTR_BUF];
	struct fds f = {.extra = -1};
	build_attr(p, attr);
	struct probe other = *p;
	other.members = 1;
	int fd = open_events(impl, ctx, &other, attr, &f);
	void *map = NULL;
	size_t maplen = 3 * (size_t)sysconf(_SC_PAGESIZE);
	int setup = fd < 0 ? fd : 0;
	if (!setup && p->mapped)
		setup = impl->mmap(ctx, fd, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &map);
	int second = -1;
	if (!setup && strcmp(p->argkind, "otherfd") == 0) {
		build_attr(&other, attr);
		second = impl->open(ctx, (struct pecs_attr *)attr, 0, -1, -1, 0);
		setup = second < 0 ? second : 0;
	}
	if (setup < 0) {
		fprintf(out, "{\"ret\": \"setup\", \"error\": \"-%s\"}\n", errname(-setup));
	} else {
		uint64_t word = p->arg;
		unsigned long arg = p->arg;
		if (strcmp(p->argkind, "ptr") == 0)
			arg = (unsigned long)&word;
		else if (strcmp(p->argkind, "badptr") == 0)
			arg = 8;
		else if (strcmp(p->argkind, "selffd") == 0)
			arg = (unsigned long)fd;
		else if (strcmp(p->argkind, "otherfd") == 0)
			arg = (unsigned long)second;
		else if (strcmp(p->argkind, "badfd") == 0)
			arg = 9999;
		put_ret(out, impl->ioctl(ctx, fd, p->request, arg), NULL);
		fputs("}\n", out);
	}
	if (second >= 0)
		impl->close(ctx, second);
	if (map)
		impl->munmap(ctx, map, maplen);
	fds_close(impl, ctx, &f);
	return 0;
}

static int run_mmap(const struct pecs_impl *impl, void *ctx, const struct probe *p, FILE *out)
{
	unsigned char attr[ATTR_BUF];
	struct fds f = {.extra = -1};
	build_attr(p, attr);
	struct probe one = *p;
	one.members = 1;
	int fd = open_events(impl, ctx, &one, attr, &f);
	if (fd < 0) {
		fprintf(out, "{\"ret\": \"setup\", \"error\": \"-%s\"}\n", errname(-fd));
		fds_close(impl, ctx, &f);
		return 0;
	}
	long page = sysconf(_SC_PAGESIZE);
	int prot = PROT_READ | (strchr(p->prot, 'w') ? PROT_WRITE : 0) |
		   (strchr(p->prot, 'x') ? PROT_EXEC : 0);
	size_t len = (size_t)p->pages * (size_t)page;
	void *map = NULL;
	int r = impl->mmap(ctx, fd, len, prot, p->private_map ? MAP_PRIVATE : MAP_SHARED,
			   (off_t)p->offset, &map);
	put_ret(out, r, "ok");
	if (r == 0) {
		const struct pecs_mmap_page *m = map;
		/* Page counts, not bytes: the page size is the host's, the shape is the ABI's. */
		fprintf(out, ", \"meta\": {\"version\": %u, \"compat_version\": %u, "
			"\"size\": %u, \"lock_even\": %s, \"data_offset_pages\": %llu, "
			"\"data_size_pages\": %llu, \"data_head\": %llu}",
			m->version, m->compat_version, m->size, m->lock % 2 ? "false" : "true",
			(unsigned long long)(m->data_offset / (uint64_t)page),
			(unsigned long long)(m->data_size / (uint64_t)page),
			(unsigned long long)m->data_head);
		impl->munmap(ctx, map, len);
	}
	fputs("}\n", out);
	fds_close(impl, ctx, &f);
	return 0;
}

int pecs_probe_run(const struct pecs_impl *impl, const char *line, FILE *out, char *err,
		   size_t errlen)
{
	struct probe p;
	int rc = parse(&p, line, err, errlen);
	if (rc < 0)
		return rc;
	void *ctx = NULL;
	rc = impl->setup(&ctx);
	if (rc < 0) {
		snprintf(err, errlen, "%s: setup failed: -%s", impl->name, errname(-rc));
		return rc;
	}
	if (strcmp(p.op, "open") == 0)
		rc = run_open(impl, ctx, &p, out);
	else if (strcmp(p.op, "read") == 0)
		rc = run_read(impl, ctx, &p, out);
	else if (strcmp(p.op, "ioctl") == 0)
		rc = run_ioctl(impl, ctx, &p, out);
	else
		rc = run_mmap(impl, ctx, &p, out);
	impl->teardown(ctx);
	fflush(out);
	return rc;
}
