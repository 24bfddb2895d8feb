/* Runs one sequence on one implementation and reduces each answer to what both sides
 * must agree on: the return value or errno, and for reads the layout, not the counts
 * (which differ between any two runs). In-process and without a fork: one engine (or the
 * kernel's fd table) per sequence, everything closed and unmapped at its end. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "conformance/differential/diff.h"

/* No fd on either side: beyond any fd table, and beyond ref's engine-local numbers. */
#define BAD_FD 0x3fffffff
#define MAX_MAPS DIFF_MAX_CALLS

struct side {
	const struct pecs_impl *impl;
	void *ctx;
	int fd[DIFF_MAX_CALLS];        /* by call id; -1 when not open */
	uint64_t id[DIFF_MAX_CALLS];   /* the event id PERF_EVENT_IOC_ID gave */
	const struct pecs_attr *attr[DIFF_MAX_CALLS];
	void *map[MAX_MAPS];
	size_t maplen[MAX_MAPS];
	int nmaps;
	long page;
};

static int ncpus = 1;

static void ignore_signal(int sig)
{
	(void)sig;
}

void diff_exec_init(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	ncpus = n > 0 ? (int)n : 1;
	/* Pinned to the last CPU, an event bound to CPU 0 for this task never runs: its
	 * answer no longer depends on where the scheduler put us. */
	if (ncpus >= 2) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(ncpus - 1, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	/* sigtrap events and FIOASYNC may signal us; neither may end the run. */
	struct sigaction sa = {.sa_handler = ignore_signal};
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGIO, &sa, NULL);
}

int diff_exec_ncpus(void)
{
	return ncpus;
}

static int fd_of(const struct side *sd, int ref)
{
	if (ref == DIFF_NO_REF)
		return -1;
	if (ref < 0 || ref >= DIFF_MAX_CALLS || sd->fd[ref] < 0)
		return BAD_FD;
	return sd->fd[ref];
}

static int ref_of_id(const struct side *sd, uint64_t id)
{
	for (int i = 0; i < DIFF_MAX_CALLS; i++)
		if (sd->fd[i] >= 0 && sd->id[i] == id)
			return i;
	return -1;
}

static void do_open(struct side *sd, const struct diff_call *c, struct diff_outcome *o)
{
	static _Alignas(8) unsigned char buf[4096];
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &c->attr, sizeof(c->attr));
	if (c->tail_byte && c->attr.size > sizeof(c->attr) && c->attr.size <= sizeof(buf))
		buf[c->attr.size - 1] = 1;
	pid_t pid = c->pid == PID_SELF ? 0 : c->pid == PID_TID ? gettid() : -1;
	struct pecs_attr *a = (struct pecs_attr *)buf;
	int fd = sd->impl->open(sd->ctx, a, pid, c->cpu, fd_of(sd, c->group), c->flags);
	if (fd < 0) {
		o->ret = fd;
		if (fd == -E2BIG)
			snprintf(o->shape, sizeof(o->shape), "size=%u", a->size);
		return;
	}
	o->ret = 0;
	sd->attr[c->id] = &c->attr;
	uint64_t id = 0;
	int err = sd->impl->ioctl(sd->ctx, fd, PECS_IOC_ID, (unsigned long)&id);
	if (err < 0)
		snprintf(o->broken, sizeof(o->broken), "ID refused: %s", diff_errno_name(err));
	else if (ref_of_id(sd, id) >= 0)
		snprintf(o->broken, sizeof(o->broken), "id taken twice");
	sd->fd[c->id] = fd;
	sd->id[c->id] = id;
}

/* One u64 slot of the read buffer, appended to the shape: "+" nonzero, "0" zero. */
static void put(char *shape, size_t len, const char *what)
{
	size_t used = strlen(shape);
	snprintf(shape + used, len - used, "%s", what);
}

static void read_shape(const struct side *sd, int ref, const uint64_t *v, size_t n,
		       struct diff_outcome *o)
{
	uint64_t rf = sd->attr[ref]->read_format;
	int grouped = (rf & PECS_FORMAT_GROUP) != 0;
	uint64_t nr = 1, enabled = 0, running = 0;
	size_t k = 0;
	char tmp[32];
#define NEXT() (k < n ? v[k++] : 0)
	if (grouped) {
		nr = NEXT();
		snprintf(tmp, sizeof(tmp), "nr%llu", (unsigned long long)nr);
		put(o->shape, sizeof(o->shape), tmp);
		enabled = rf & PECS_FORMAT_TOTAL_TIME_ENABLED ? NEXT() : 0;
		running = rf & PECS_FORMAT_TOTAL_TIME_RUNNING ? NEXT() : 0;
	}
	for (uint64_t m = 0; m < nr && k < n; m++) {
		uint64_t value = NEXT();
		if (!grouped) {
			enabled = rf & PECS_FORMAT_TOTAL_TIME_ENABLED ? NEXT() : 0;
			running = rf & PECS_FORMAT_TOTAL_TIME_RUNNING ? NEXT() : 0;
		}
		if (running == 0 && value != 0 && (rf & PECS_FORMAT_TOTAL_TIME_RUNNING))
			snprintf(o->broken, sizeof(o->broken), "counted while not running");
		if (rf & PECS_FORMAT_ID) {
			snprintf(tmp, sizeof(tmp), "[i%d]", ref_of_id(sd, NEXT()));
			put(o->shape, sizeof(o->shape), tmp);
		}
		if (rf & PECS_FORMAT_LOST)
			(void)NEXT();
	}
#undef NEXT
	if (rf & (PECS_FORMAT_TOTAL_TIME_ENABLED | PECS_FORMAT_TOTAL_TIME_RUNNING)) {
		snprintf(tmp, sizeof(tmp), " e%c r%c", enabled ? '+' : '0', running ? '+' : '0');
		put(o->shape, sizeof(o->shape), tmp);
	}
	if ((rf & PECS_FORMAT_TOTAL_TIME_ENABLED) && (rf & PECS_FORMAT_TOTAL_TIME_RUNNING) &&
	    running > enabled)
		snprintf(o->broken, sizeof(o->broken), "time_running > time_enabled");
}

static void do_read(struct side *sd, const struct diff_call *c, struct diff_outcome *o)
{
	uint64_t buf[4096 / 8 + 8];
	memset(buf, 0, sizeof(buf));
	ssize_t r = sd->impl->read(sd->ctx, fd_of(sd, c->ref), buf, c->count);
	o->ret = r;
	if (r > 0)
		read_shape(sd, c->ref, buf, (size_t)r / 8, o);
}

static void do_ioctl(struct side *sd, const struct diff_seq *s, const struct diff_call *c,
		     struct diff_outcome *o)
{
	static _Alignas(8) unsigned char buf[4096];
	memset(buf, 0, sizeof(buf));
	unsigned long arg = (unsigned long)c->arg;
	switch (c->arg_kind) {
	case ARG_PTR:
		memcpy(buf, &c->arg, sizeof(c->arg));
		if (c->request == PECS_IOC_MODIFY_ATTRIBUTES)
			for (int i = 0; i < s->n; i++)
				if (s->calls[i].op == DIFF_OPEN && s->calls[i].id == c->ref)
					memcpy(buf, &s->calls[i].attr, sizeof(struct pecs_attr));
		arg = (unsigned long)buf;
		break;
	case ARG_NULL: arg = 0; break;
	case ARG_BADPTR: arg = 8; break;
	case ARG_FD: arg = (unsigned long)(long)fd_of(sd, (int)(int64_t)c->arg); break;
	default: break;
	}
	o->ret = sd->impl->ioctl(sd->ctx, fd_of(sd, c->ref), c->request, arg);
	if (o->ret == 0 && c->request == PECS_IOC_ID && c->arg_kind == ARG_PTR) {
		uint64_t id;
		memcpy(&id, buf, sizeof(id));
		snprintf(o->shape, sizeof(o->shape), "id of i%d", ref_of_id(sd, id));
	}
}

static void do_mmap(struct side *sd, const struct diff_call *c, struct diff_outcome *o)
{
	size_t len = c->pages < 0 ? SIZE_MAX : (size_t)c->pages * (size_t)sd->page;
	void *addr = NULL;
	int r = sd->impl->mmap(sd->ctx, fd_of(sd, c->ref), len, c->prot, c->mflags,
			       (off_t)c->offset_pages * sd->page + c->offset_byte, &addr);
	o->ret = r;
	if (r == 0 && sd->nmaps < MAX_MAPS) {
		sd->map[sd->nmaps] = addr;
		sd->maplen[sd->nmaps++] = len;
	}
}

static void do_poll(struct side *sd, const struct diff_call *c, struct diff_outcome *o)
{
	int r = sd->impl->poll(sd->ctx, fd_of(sd, c->ref), c->events, 0);
	/* Whether a sample has reached a ring yet is the schedule's business. */
	if (r > 0 && sd->nmaps > 0)
		r &= ~(POLLIN | POLLRDNORM);
	o->ret = r;
}

static void finish(struct side *sd)
{
	for (int i = 0; i < sd->nmaps; i++)
		sd->impl->munmap(sd->ctx, sd->map[i], sd->maplen[i]);
	for (int i = 0; i < DIFF_MAX_CALLS; i++)
		if (sd->fd[i] >= 0)
			sd->impl->close(sd->ctx, sd->fd[i]);
	sd->impl->teardown(sd->ctx);
}

int diff_exec(const struct pecs_impl *impl, const struct diff_seq *s, struct diff_run *run)
{
	struct side sd = {.impl = impl, .page = sysconf(_SC_PAGESIZE)};
	memset(sd.fd, -1, sizeof(sd.fd));
	memset(run, 0, sizeof(*run));
	int err = impl->setup(&sd.ctx);
	if (err < 0)
		return err;
	for (int i = 0; i < s->n; i++) {
		const struct diff_call *c = &s->calls[i];
		struct diff_outcome *o = &run->out[i];
		switch (c->op) {
		case DIFF_OPEN: do_open(&sd, c, o); break;
		case DIFF_READ: do_read(&sd, c, o); break;
		case DIFF_IOCTL: do_ioctl(&sd, s, c, o); break;
		case DIFF_MMAP: do_mmap(&sd, c, o); break;
		case DIFF_POLL: do_poll(&sd, c, o); break;
		case DIFF_CLOSE:
			o->ret = sd.impl->close(sd.ctx, fd_of(&sd, c->ref));
			if (o->ret == 0 && c->ref >= 0)
				sd.fd[c->ref] = -1;
			break;
		}
		run->n = i + 1;
	}
	finish(&sd);
	return 0;
}
