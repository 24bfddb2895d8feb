/* An implementation in another process, in any language: the adapter starts $PECS_TESTEE
 * (a command line run by /bin/sh as `exec <command>`), and forwards every vtable call as a
 * length-prefixed request on the testee's stdin, reading the response from its stdout
 * (docs/testee-protocol.md). This file is the protocol: how each operation's arguments and
 * results are encoded, the shared mappings and the vtable; pipe_transport.c starts the
 * testee and carries the frames.
 *
 * Each process talks to its own testee: with --isolate every case runs in a forked child,
 * which starts a fresh testee rather than share a stream the parent or a killed sibling may
 * have left half-written. Every request has a deadline (PECS_PIPE_TIMEOUT_MS, 10 s by
 * default, plus a poll's own timeout). A testee that exits or misses its deadline ends the
 * case: inside an isolated child the adapter names the cause on stderr and dies by SIGPIPE
 * (testee gone) or SIGALRM (deadline), which the runner reports as CRASH; without
 * --isolate the call returns -EPIPE or -ETIMEDOUT and the next case starts a new testee.
 *
 * Version 2 shares the ring: the testee answers MMAP with the fd behind its mapping
 * (SCM_RIGHTS), and the adapter maps the same bytes from it, so data_head and data_tail
 * are one memory for the testee's implementation and the case. A testee that speaks only
 * version 1 carries no memory: mmap() answers -ENODEV and features that need a mapping in
 * the runner's address space are not claimed through the pipe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "pecs/impl.h"
#include "pipe_transport.h"
#include "pipe_wire.h"

/* A mapping shared with the testee: our view of it, and its address over there. */
struct shared_map {
	void *addr;
	size_t len;
	uint64_t remote;
	unsigned int gen; /* the testee it is shared with (pipe_transport_testee()) */
};

#define MAX_SHARED_MAPS 64

static struct shared_map maps[MAX_SHARED_MAPS];
static size_t nmaps;
static const char *command;
static char impl_name[128];
static char *features_text;
static const char **features;

/* ---- caller memory --------------------------------------------------------------- */

/* Copies from the caller's memory without faulting; 0 or -EFAULT. */
static int peek(void *dst, const void *src, size_t n)
{
	if (n == 0)
		return 0;
	struct iovec local = {.iov_base = dst, .iov_len = n};
	struct iovec remote = {.iov_base = (void *)src, .iov_len = n};
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

static int poke(void *dst, const void *src, size_t n)
{
	if (n == 0)
		return 0;
	struct iovec local = {.iov_base = (void *)src, .iov_len = n};
	struct iovec remote = {.iov_base = dst, .iov_len = n};
	return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* Bytes of an attr the kernel would read: attr.size of them, 64 for size 0, and only the
 * leading size field when the size is refused before anything else is read. */
static size_t attr_bytes(const void *attr)
{
	uint8_t head[8];
	if (peek(head, attr, sizeof(head)) < 0)
		return 0;
	uint32_t size = pecs_get_u32(head + 4);
	if (size == 0)
		return PECS_ATTR_SIZE_VER0;
	if (size < PECS_ATTR_SIZE_VER0 || size > 4096)
		return sizeof(head);
	return size;
}

/* Fills kind and the bytes of a pointer argument of n bytes at p. */
static uint32_t marshal(const void *p, size_t n, uint8_t *out)
{
	if (!p)
		return PECS_PTR_NULL;
	return peek(out, p, n) == 0 ? PECS_PTR_BYTES : PECS_PTR_BAD;
}

/* ---- the vtable ------------------------------------------------------------------ */

static int p_setup(void **ctx)
{
	*ctx = NULL; /* the state lives in the testee */
	/* Who "pid 0" is: a case measures the thread that runs it, which is ours. */
	uint8_t req[8];
	pecs_put_u32(req, (uint32_t)getpid());
	pecs_put_u32(req + 4, (uint32_t)gettid());
	return (int)pipe_call_simple(PECS_OP_SETUP, req, sizeof(req), 0);
}

static void p_teardown(void *ctx)
{
	(void)ctx;
	pipe_call_simple(PECS_OP_TEARDOWN, NULL, 0, 0);
}

static int p_open(void *ctx, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
		  unsigned long flags)
{
	(void)ctx;
	uint8_t req[24 + 4096];
	size_t n = attr ? attr_bytes(attr) : 0;
	uint32_t kind = !attr ? PECS_PTR_NULL : n ? marshal(attr, n, req + 24) : PECS_PTR_BAD;
	if (kind != PECS_PTR_BYTES)
		n = 0;
	pecs_put_u32(req, (uint32_t)pid);
	pecs_put_u32(req + 4, (uint32_t)cpu);
	pecs_put_u32(req + 8, (uint32_t)group_fd);
	pecs_put_u32(req + 12, kind);
	pecs_put_u64(req + 16, flags);
	struct pipe_response r;
	long err = pipe_call(PECS_OP_OPEN, req, 24 + n, &r, 0);
	if (err < 0)
		return (int)err;
	/* The kernel writes its own attr size back when it refuses the caller's. */
	if (kind == PECS_PTR_BYTES && r.len >= 4 && pecs_get_u32(r.body) != attr->size) {
		uint32_t size = pecs_get_u32(r.body);
		poke(&attr->size, &size, sizeof(size));
	}
	free(r.body);
	return (int)r.ret;
}

static int p_close(void *ctx, int fd)
{
	(void)ctx;
	uint8_t req[4];
	pecs_put_u32(req, (uint32_t)fd);
	return (int)pipe_call_simple(PECS_OP_CLOSE, req, sizeof(req), 0);
}

static ssize_t p_read(void *ctx, int fd, void *buf, size_t count)
{
	(void)ctx;
	uint8_t req[16], probe;
	if (count > PECS_PIPE_MAX_BUFFER)
		count = PECS_PIPE_MAX_BUFFER;
	/* Only the first byte is probed: the result's own length decides what is written. */
	uint32_t kind = !buf ? PECS_PTR_NULL
			: count && (peek(&probe, buf, 1) < 0 || poke(buf, &probe, 1) < 0)
				? PECS_PTR_BAD
				: PECS_PTR_BYTES;
	pecs_put_u32(req, (uint32_t)fd);
	pecs_put_u32(req + 4, kind);
	pecs_put_u64(req + 8, count);
	struct pipe_response r;
	long err = pipe_call(PECS_OP_READ, req, sizeof(req), &r, 0);
	if (err < 0)
		return err;
	ssize_t ret = (ssize_t)r.ret;
	if (ret > 0 && (r.len < (size_t)ret || (size_t)ret > count))
		ret = -EPROTO;
	else if (ret > 0 && poke(buf, r.body, (size_t)ret) < 0)
		ret = -EFAULT;
	free(r.body);
	return ret;
}

static ssize_t p_write(void *ctx, int fd, const void *buf, size_t count)
{
	(void)ctx;
	if (count > PECS_PIPE_MAX_BUFFER)
		count = PECS_PIPE_MAX_BUFFER;
	uint8_t *req = malloc(16 + count);
	if (!req)
		return -ENOMEM;
	uint32_t kind = !buf ? PECS_PTR_NULL : marshal(buf, count, req + 16);
	pecs_put_u32(req, (uint32_t)fd);
	pecs_put_u32(req + 4, kind);
	pecs_put_u64(req + 8, count);
	long ret = pipe_call_simple(PECS_OP_WRITE, req, 16 + (kind == PECS_PTR_BYTES ? count : 0), 0);
	free(req);
	return ret;
}

/* Bytes behind an ioctl's pointer argument, or 0 when the argument is an integer. */
static size_t ioctl_bytes(unsigned long request, unsigned long arg)
{
	switch (request) {
	case PECS_IOC_PERIOD:
	case PECS_IOC_ID:
		return 8;
	/* The generic file ioctls the VFS answers for every fd before perf sees them:
	 * FIONBIO and FIOASYNC read an int, FIGETBSZ writes one. */
	case FIONBIO:
	case FIOASYNC:
	case FIGETBSZ:
		return sizeof(int);
	case PECS_IOC_MODIFY_ATTRIBUTES:
		return attr_bytes((const void *)arg);
	case PECS_IOC_QUERY_BPF: {
		/* struct perf_event_query_bpf { u32 ids_len; u32 prog_cnt; u32 ids[]; } */
		uint8_t head[4];
		if (peek(head, (const void *)arg, sizeof(head)) < 0)
			return 8;
		uint64_t n = 8 + 4ull * pecs_get_u32(head);
		return n > 4096 ? 4096 : (size_t)n;
	}
	case PECS_IOC_SET_FILTER: {
		/* A C string: up to and including its NUL, read page by page. */
		const char *s = (const char *)arg;
		size_t n = 0;
		char c = 1;
		while (n < 4096 && peek(&c, s + n, 1) == 0) {
			n++;
			if (!c)
				break;
		}
		/* A string that runs into a fault before its NUL: one byte more, so marshal
		 * meets the fault and the testee is told the pointer is bad. */
		return c && n < 4096 ? n + 1 : n;
	}
	default:
		return 0;
	}
}

static int p_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	(void)ctx;
	uint8_t req[24 + 4096];
	size_t n = ioctl_bytes(request, arg);
	uint32_t kind = PECS_PTR_INTEGER;
	if (n)
		kind = marshal((const void *)arg, n, req + 24);
	if (kind != PECS_PTR_BYTES)
		n = 0;
	pecs_put_u32(req, (uint32_t)fd);
	pecs_put_u32(req + 4, kind);
	pecs_put_u64(req + 8, request);
	pecs_put_u64(req + 16, kind == PECS_PTR_INTEGER ? arg : 0);
	struct pipe_response r;
	long err = pipe_call(PECS_OP_IOCTL, req, 24 + n, &r, 0);
	if (err < 0)
		return (int)err;
	long ret = (long)r.ret;
	/* Write back only what the implementation changed: the caller's memory may be
	 * read-only where nothing is written. */
	if (kind == PECS_PTR_BYTES && r.len == n && memcmp(r.body, req + 24, n) != 0 &&
	    poke((void *)arg, r.body, n) < 0 && ret >= 0)
		ret = -EFAULT;
	free(r.body);
	return (int)ret;
}

/* 0 with the testee's answer in *ret, or -errno when the testee failed (and is gone). */
static long remote_munmap(uint64_t remote, size_t length, long *ret)
{
	uint8_t req[PECS_MUNMAP_REQ];
	pecs_put_u64(req, remote);
	pecs_put_u64(req + 8, length);
	struct pipe_response r;
	long err = pipe_call(PECS_OP_MUNMAP, req, sizeof(req), &r, 0);
	free(r.body);
	*ret = err < 0 ? err : (long)r.ret;
	return err;
}

static int p_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		  void **addr)
{
	(void)ctx;
	if (pipe_transport_version() < 2)
		return -ENODEV; /* protocol v1 carries no shared memory */
	uint8_t req[PECS_MMAP_REQ];
	pecs_put_u32(req, (uint32_t)fd);
	pecs_put_u32(req + 4, (uint32_t)prot);
	/* Where the ring goes is this side's business: the testee maps it where it likes. */
	pecs_put_u32(req + 8, (uint32_t)(flags & ~(MAP_FIXED | MAP_FIXED_NOREPLACE)));
	pecs_put_u32(req + 12, 0);
	pecs_put_u64(req + 16, length);
	pecs_put_u64(req + 24, (uint64_t)offset);
	struct pipe_response r;
	long err = pipe_call(PECS_OP_MMAP, req, sizeof(req), &r, 0);
	if (err < 0)
		return (int)err;
	if (r.ret != 0) {
		free(r.body);
		return r.ret < 0 ? (int)r.ret : -EPROTO;
	}
	uint64_t remote = pecs_get_u64(r.body);
	off_t fd_offset = (off_t)pecs_get_u64(r.body + 8);
	free(r.body);
	/* Same length, protection and flags as the testee's mapping: Linux lets an event's
	 * buffer be mapped again at its size, and in the same write mode it is one buffer. */
	void *p = mmap(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) ? *addr : NULL, length, prot,
		       flags, r.fd, fd_offset);
	int e = p == MAP_FAILED ? -errno : 0;
	close(r.fd); /* the mapping holds the file from here on */
	if (e == 0 && nmaps == MAX_SHARED_MAPS) {
		munmap(p, length);
		e = -ENOMEM;
	}
	if (e < 0) {
		/* The case sees one failed call: undo the testee's half. */
		long ignored;
		remote_munmap(remote, length, &ignored);
		return e;
	}
	maps[nmaps++] = (struct shared_map){.addr = p, .len = length, .remote = remote,
					    .gen = pipe_transport_testee()};
	*addr = p;
	return 0;
}

static int p_munmap(void *ctx, void *addr, size_t length)
{
	(void)ctx;
	if (pipe_transport_version() < 2)
		return -EINVAL;
	struct shared_map *m = NULL;
	for (size_t i = 0; i < nmaps && !m; i++)
		if ((uint8_t *)addr >= (uint8_t *)maps[i].addr &&
		    (uint8_t *)addr < (uint8_t *)maps[i].addr + maps[i].len)
			m = &maps[i];
	/* Memory the testee never mapped is the runner's own, as it is in process. */
	if (!m)
		return munmap(addr, length) < 0 ? -errno : 0;
	long ret = 0, failed = 0;
	/* A testee that has gone (or been replaced) took its half of the mapping along. */
	if (m->gen == pipe_transport_testee())
		failed = remote_munmap(m->remote + (uint64_t)((uint8_t *)addr - (uint8_t *)m->addr),
				       length, &ret);
	/* The testee's answer decides: a refused unmap (a partial one, on Linux) leaves both
	 * halves; a testee that failed has no half left, so ours goes too. */
	if (ret == 0 || failed) {
		int local = munmap(addr, length) < 0 ? -errno : 0;
		if (local == 0 && addr == m->addr && length >= m->len)
			*m = maps[--nmaps];
		if (ret == 0)
			ret = local;
	}
	return (int)ret;
}

static int p_poll(void *ctx, int fd, short events, int poll_timeout_ms)
{
	(void)ctx;
	uint8_t req[12];
	pecs_put_u32(req, (uint32_t)fd);
	pecs_put_u16(req + 4, (uint16_t)events);
	pecs_put_u16(req + 6, 0);
	pecs_put_u32(req + 8, (uint32_t)poll_timeout_ms);
	return (int)pipe_call_simple(PECS_OP_POLL, req, sizeof(req), poll_timeout_ms);
}

static int p_host_facts(void *ctx, struct pecs_host_facts *f)
{
	(void)ctx;
	struct pipe_response r;
	long err = pipe_call(PECS_OP_HOST_FACTS, NULL, 0, &r, 0);
	if (err < 0)
		return (int)err;
	if (r.ret == 0 && r.len >= PECS_FACTS_FIXED) {
		const uint8_t *b = r.body;
		f->page_size = (long)pecs_get_u64(b);
		f->ncpus = (int)pecs_get_u32(b + 8);
		f->max_stack = (int)pecs_get_u32(b + 12);
		f->max_sample_rate = (int)pecs_get_u32(b + 16);
		f->mlock_kb = (int)pecs_get_u32(b + 20);
		f->paranoid = (int)pecs_get_u32(b + 24);
		f->privileged = (int)pecs_get_u32(b + 28);
		f->attr_size = pecs_get_u32(b + 32);
		size_t rl = r.len - PECS_FACTS_FIXED;
		if (rl >= sizeof(f->kernel_release))
			rl = sizeof(f->kernel_release) - 1;
		memcpy(f->kernel_release, b + PECS_FACTS_FIXED, rl);
		f->kernel_release[rl] = 0;
	}
	free(r.body);
	return r.ret == 0 && r.len < PECS_FACTS_FIXED ? -EPROTO : (int)r.ret;
}

/* The protocol carries no task events: a testee that claims tracepoint.syscalls sees the
 * runner's system calls itself, as one proxying a kernel on the runner's tid does. */
static int p_task_event(void *ctx, const struct pecs_task_event *te)
{
	(void)ctx;
	(void)te;
	return 0;
}

static struct pecs_impl pipe_impl = {
	.size = sizeof(struct pecs_impl),
	.setup = p_setup,
	.teardown = p_teardown,
	.open = p_open,
	.close = p_close,
	.read = p_read,
	.ioctl = p_ioctl,
	.mmap = p_mmap,
	.munmap = p_munmap,
	.poll = p_poll,
	.host_facts = p_host_facts,
	.write = p_write,
	.task_event = p_task_event,
};

/* Features the pipe cannot carry: the vtable's optional inject_sample, set_profiler and
 * fcntl have no operation (and fasync's signals would go to the testee's process, not
 * the runner's), a version 1 testee cannot share its mappings, and the runner's
 * mapping is a second one of the testee's buffer, so the testee never sees what the
 * runner's process does to it (mmap.vma), and the testee's thread, not the runner's,
 * creates the events and owns them for prctl (prctl.perf_events). */
static int cannot_carry(const char *f)
{
	static const char *const never[] = {"engine.inject", "profiler.replay", "mmap.vma", "prctl.perf_events",
					    "fasync", NULL};
	static const char *const v1_cannot[] = {"mmap", "mmap.overwrite", NULL};
	for (const char *const *p = never; *p; p++)
		if (strcmp(*p, f) == 0)
			return 1;
	for (const char *const *p = v1_cannot; *p && pipe_transport_version() < 2; p++)
		if (strcmp(*p, f) == 0)
			return 1;
	return 0;
}

/* "name\nfeature\nfeature\n" from the HELLO response. */
static int parse_hello(const struct pipe_response *r)
{
	features_text = malloc(r->len + 1);
	features = calloc(r->len / 2 + 2, sizeof(*features));
	if (!features_text || !features)
		return -ENOMEM;
	memcpy(features_text, r->body, r->len);
	features_text[r->len] = 0;
	char *save = NULL;
	char *name = strtok_r(features_text, "\n", &save);
	if (!name)
		return -EPROTO;
	snprintf(impl_name, sizeof(impl_name), "pipe-%s", name);
	size_t n = 0;
	for (char *f = strtok_r(NULL, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
		if (cannot_carry(f))
			fprintf(stderr, "pecs-pipe: ignoring feature %s: protocol v%u cannot carry it\n",
				f, pipe_transport_version());
		else
			features[n++] = f;
	}
	features[n] = NULL;
	return 0;
}

static void fail_setup(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The run cannot start: say why and exit 2, the runners' status for a setup error. */
static void fail_setup(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "pecs-pipe: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

const struct pecs_impl *pecs_adapter(void)
{
	if (pipe_impl.name)
		return &pipe_impl;
	command = getenv("PECS_TESTEE");
	if (!command || !*command)
		fail_setup("no testee: set PECS_TESTEE to the command that starts it");
	const char *t = getenv("PECS_PIPE_TIMEOUT_MS");
	pipe_transport_init(command, t && atoi(t) > 0 ? atoi(t) : 10000);
	uint8_t v[4];
	pecs_put_u32(v, PECS_PIPE_VERSION);
	struct pipe_response r;
	if (pipe_call(PECS_OP_HELLO, v, sizeof(v), &r, 0) < 0)
		fail_setup("the testee did not answer HELLO (see above): %s", command);
	/* A version 1 testee refuses any other number; offer it 1 on the same stream. */
	if (r.ret == -EPROTONOSUPPORT) {
		free(r.body);
		pecs_put_u32(v, PECS_PIPE_VERSION_MIN);
		if (pipe_call(PECS_OP_HELLO, v, sizeof(v), &r, 0) < 0)
			fail_setup("the testee did not answer HELLO (see above): %s", command);
	}
	if (r.ret < PECS_PIPE_VERSION_MIN || r.ret > PECS_PIPE_VERSION) {
		free(r.body);
		fail_setup("the testee refused protocol versions %u to %u: %s", PECS_PIPE_VERSION_MIN,
			   PECS_PIPE_VERSION, command);
	}
	pipe_transport_set_version((uint32_t)r.ret);
	if (parse_hello(&r) < 0) {
		free(r.body);
		fail_setup("the testee's HELLO names no implementation: %s", command);
	}
	free(r.body);
	pipe_impl.name = impl_name;
	pipe_impl.features = features;
	return &pipe_impl;
}
