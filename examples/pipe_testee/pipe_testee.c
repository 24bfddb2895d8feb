/* A pipe testee (docs/testee-protocol.md): serves one struct pecs_impl on stdin/stdout.
 * By default the implementation is the real kernel (the syscall adapter linked in);
 * --plugin PATH serves a plugin's vtable instead. The pecs-pipe runner drives it, and the
 * harness compares its verdicts with the in-process runner's.
 *
 * It speaks version 2 when its stdout is a socket: serving the kernel, the fd behind a
 * mapping is the event fd itself, which it sends with the MMAP answer so the runner maps
 * the same ring. A plugin's mapping has no fd this testee can name, so serving a plugin
 * it answers MMAP with -ENODEV and claims no feature that needs the ring.
 *
 *   pipe_testee [--plugin PATH] [--own-pid] [--v1] [--die-at OP] [--hang-at OP]
 *               [--garble-at OP] [--busy-at OP]
 *
 * Serving the kernel, it opens "pid 0" events on the runner's thread (SETUP names it): a
 * case burns CPU in the runner and expects its own events to count it. --own-pid keeps
 * pid 0 as the testee's own thread. --v1 answers as a testee written for version 1 did:
 * HELLO with any other version is refused, so the runner must fall back.
 *
 * The --*-at options make it misbehave on the first request of operation OP (open, read,
 * ioctl, ...): exit with status 3, stop answering, or answer with a wrong sequence number.
 * --busy-at is a slow testee, not a broken one: it works on the CPU for 2.5 times the
 * runner's deadline (PECS_PIPE_TIMEOUT_MS) of wall time, then answers. They exist so that
 * tests can prove the runner's verdicts for a broken testee, and its patience with a slow
 * one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/capability.h>

#include "pecs/impl.h"
#include "pipe_wire.h"

static const char *const op_names[] = {
	[PECS_OP_HELLO] = "hello", [PECS_OP_HOST_FACTS] = "host_facts",
	[PECS_OP_SETUP] = "setup", [PECS_OP_TEARDOWN] = "teardown",
	[PECS_OP_OPEN] = "open",   [PECS_OP_CLOSE] = "close",
	[PECS_OP_READ] = "read",   [PECS_OP_WRITE] = "write",
	[PECS_OP_IOCTL] = "ioctl", [PECS_OP_POLL] = "poll",
	[PECS_OP_MMAP] = "mmap",   [PECS_OP_MUNMAP] = "munmap",
};
#define NOPS (sizeof(op_names) / sizeof(op_names[0]))

static const struct pecs_impl *impl;
static void *ctx;
static void *bad_page; /* PROT_NONE: what a caller's inaccessible pointer becomes here */
static uint8_t *scratch; /* two pages for pointer arguments */
static long page_size;
static int die_at, hang_at, garble_at, busy_at;
/* Serving the kernel, "pid 0" in a case means the runner's thread, not ours. */
static int as_caller = 1;
static pid_t caller_tid;
/* The implementation's mappings are backed by the event fd: true for the kernel only. */
static int fd_backed = 1;
static uint32_t version; /* what HELLO agreed */
static int only_v1;

/* Mappings made for the runner: MUNMAP may only touch these, and TEARDOWN drops what a
 * case left behind. */
#define MAX_MAPS 64
static struct {
	void *addr;
	size_t len;
} maps[MAX_MAPS];
static size_t nmaps;

/* ---- I/O --------------------------------------------------------------------- */

static int read_full(void *buf, size_t n)
{
	uint8_t *p = buf;
	while (n > 0) {
		ssize_t r = read(0, p, n);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void write_full(const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n > 0) {
		ssize_t w = write(1, p, n);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			exit(1); /* the runner is gone */
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Sends a response; with fd >= 0, the fd rides on its first byte (SCM_RIGHTS). */
static void respond_fd(uint32_t op, uint32_t seq, int64_t ret, const void *body, size_t len,
		       int fd)
{
	uint8_t head[4 + PECS_RESP_HEAD];
	pecs_put_u32(head, (uint32_t)(PECS_RESP_HEAD + len));
	pecs_put_u32(head + 4, op);
	pecs_put_u32(head + 8, seq);
	pecs_put_u64(head + 12, (uint64_t)ret);
	size_t sent = 0;
	if (fd >= 0) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(sizeof(int))];
		} control;
		memset(&control, 0, sizeof(control));
		struct iovec iov[2] = {{.iov_base = head, .iov_len = sizeof(head)},
				       {.iov_base = (void *)body, .iov_len = len}};
		struct msghdr msg = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1,
				     .msg_control = control.buf,
				     .msg_controllen = sizeof(control.buf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
		ssize_t w;
		do
			w = sendmsg(1, &msg, 0);
		while (w < 0 && errno == EINTR);
		if (w <= 0)
			exit(1); /* the runner is gone */
		sent = (size_t)w;
	}
	/* Whatever sendmsg did not take goes as plain bytes: the fd went with the first. */
	if (sent < sizeof(head))
		write_full(head + sent, sizeof(head) - sent);
	size_t body_sent = sent > sizeof(head) ? sent - sizeof(head) : 0;
	if (len > body_sent)
		write_full((const uint8_t *)body + body_sent, len - body_sent);
}

static void respond(uint32_t op, uint32_t seq, int64_t ret, const void *body, size_t len)
{
	respond_fd(op, seq, ret, body, len, -1);
}

/* The pointer an argument of the given kind becomes on this side. */
static void *pointer(uint32_t kind, const uint8_t *bytes, size_t n)
{
	if (kind == PECS_PTR_NULL)
		return NULL;
	if (kind == PECS_PTR_BAD)
		return bad_page;
	memset(scratch, 0, 2 * (size_t)page_size);
	if (n > 2 * (size_t)page_size)
		n = 2 * (size_t)page_size;
	memcpy(scratch, bytes, n);
	return scratch;
}

/* ---- host facts -------------------------------------------------------------- */

static int proc_int(const char *path, int fallback)
{
	FILE *f = fopen(path, "r");
	int v = fallback;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = fallback;
		fclose(f);
	}
	return v;
}

/* Capabilities count for perf only in the initial user namespace. */
static int privileged(void)
{
	FILE *f = fopen("/proc/self/uid_map", "r");
	unsigned long in = 0, out = 0, count = 0;
	if (f) {
		int ok = fscanf(f, "%lu %lu %lu", &in, &out, &count) == 3;
		fclose(f);
		if (ok && !(in == 0 && out == 0 && count == 4294967295ul))
			return 0;
	}
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return geteuid() == 0;
	const int sys_admin = 21, perfmon = 38;
	return ((data[0].effective >> sys_admin) & 1) || ((data[1].effective >> (perfmon - 32)) & 1);
}

static void host_facts(uint32_t seq)
{
	struct pecs_host_facts f;
	memset(&f, 0, sizeof(f));
	f.size = sizeof(f);
	long n = sysconf(_SC_NPROCESSORS_CONF);
	f.ncpus = n > 0 ? (int)n : 1;
	f.page_size = page_size;
	f.max_stack = proc_int("/proc/sys/kernel/perf_event_max_stack", 127);
	f.max_sample_rate = proc_int("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
	f.mlock_kb = proc_int("/proc/sys/kernel/perf_event_mlock_kb", 516);
	f.paranoid = proc_int("/proc/sys/kernel/perf_event_paranoid", 2);
	f.privileged = privileged();
	f.attr_size = PECS_ATTR_SIZE_LATEST;
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(f.kernel_release, sizeof(f.kernel_release), "%.64s", u.release);
	if (PECS_IMPL_HAS(impl, host_facts)) {
		int r = impl->host_facts(ctx, &f);
		if (r < 0) {
			respond(PECS_OP_HOST_FACTS, seq, r, NULL, 0);
			return;
		}
	}
	uint8_t b[PECS_FACTS_FIXED + sizeof(f.kernel_release)];
	pecs_put_u64(b, (uint64_t)f.page_size);
	pecs_put_u32(b + 8, (uint32_t)f.ncpus);
	pecs_put_u32(b + 12, (uint32_t)f.max_stack);
	pecs_put_u32(b + 16, (uint32_t)f.max_sample_rate);
	pecs_put_u32(b + 20, (uint32_t)f.mlock_kb);
	pecs_put_u32(b + 24, (uint32_t)f.paranoid);
	pecs_put_u32(b + 28, (uint32_t)f.privileged);
	pecs_put_u32(b + 32, f.attr_size);
	size_t rl = strnlen(f.kernel_release, sizeof(f.kernel_release) - 1);
	memcpy(b + PECS_FACTS_FIXED, f.kernel_release, rl);
	respond(PECS_OP_HOST_FACTS, seq, 0, b, PECS_FACTS_FIXED + rl);
}

/* ---- requests ----------------------------------------------------------------- */

/* Features this testee cannot serve: the protocol has no operation for the optional
 * inject_sample and set_profiler entries, and without a shared mapping (version 1, or a
 * plugin's memory) the cases that read the ring cannot run in the runner. */
static int unservable(const char *f)
{
	static const char *const never[] = {"engine.inject", "profiler.replay", NULL};
	static const char *const ring[] = {"mmap", "mmap.overwrite", "sampling",
					    "ioctl.set_output", "ioctl.pause_output", NULL};
	for (const char *const *p = never; *p; p++)
		if (strcmp(*p, f) == 0)
			return 1;
	for (const char *const *p = ring; *p && (version < 2 || !fd_backed); p++)
		if (strcmp(*p, f) == 0)
			return 1;
	return 0;
}

static int stdout_is_socket(void)
{
	struct stat st;
	return fstat(1, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void hello(uint32_t seq, const uint8_t *b, size_t len)
{
	uint32_t offered = len >= 4 ? pecs_get_u32(b) : 0;
	if (offered < PECS_PIPE_VERSION_MIN || (only_v1 && offered != 1)) {
		respond(PECS_OP_HELLO, seq, -EPROTONOSUPPORT, NULL, 0);
		return;
	}
	/* Version 2 passes fds, which only a socket can carry. */
	version = offered >= 2 && stdout_is_socket() ? 2 : 1;
	char text[4096];
	int n = snprintf(text, sizeof(text), "%s\n", impl->name);
	for (const char *const *f = impl->features; f && *f && n < (int)sizeof(text); f++)
		if (!unservable(*f))
			n += snprintf(text + n, sizeof(text) - (size_t)n, "%s\n", *f);
	if (n >= (int)sizeof(text))
		n = (int)sizeof(text) - 1;
	respond(PECS_OP_HELLO, seq, version, text, (size_t)n);
}

static void unmap_all(void)
{
	while (nmaps > 0) {
		nmaps--;
		impl->munmap(ctx, maps[nmaps].addr, maps[nmaps].len);
	}
}

static void serve_mmap(uint32_t seq, const uint8_t *b)
{
	if (version < 2) {
		respond(PECS_OP_MMAP, seq, -ENOSYS, NULL, 0);
		return;
	}
	if (!fd_backed || nmaps == MAX_MAPS) {
		respond(PECS_OP_MMAP, seq, fd_backed ? -ENOMEM : -ENODEV, NULL, 0);
		return;
	}
	int fd = (int)pecs_get_u32(b);
	uint64_t length = pecs_get_u64(b + 16), offset = pecs_get_u64(b + 24);
	void *addr = NULL;
	int r = impl->mmap(ctx, fd, (size_t)length, (int)pecs_get_u32(b + 4),
			   (int)pecs_get_u32(b + 8), (off_t)offset, &addr);
	if (r < 0) {
		respond(PECS_OP_MMAP, seq, r, NULL, 0);
		return;
	}
	maps[nmaps].addr = addr;
	maps[nmaps].len = (size_t)length;
	nmaps++;
	uint8_t out[PECS_MMAP_RESP];
	pecs_put_u64(out, (uint64_t)(uintptr_t)addr);
	pecs_put_u64(out + 8, offset);
	respond_fd(PECS_OP_MMAP, seq, 0, out, sizeof(out), fd);
}

static void serve_munmap(uint32_t seq, const uint8_t *b)
{
	if (version < 2) {
		respond(PECS_OP_MUNMAP, seq, -ENOSYS, NULL, 0);
		return;
	}
	uint8_t *addr = (uint8_t *)(uintptr_t)pecs_get_u64(b);
	size_t length = (size_t)pecs_get_u64(b + 8);
	size_t i = 0;
	while (i < nmaps && !(addr >= (uint8_t *)maps[i].addr &&
			      addr < (uint8_t *)maps[i].addr + maps[i].len))
		i++;
	/* Only memory mapped for the runner: anything else is this process's own. */
	if (i == nmaps) {
		respond(PECS_OP_MUNMAP, seq, -EINVAL, NULL, 0);
		return;
	}
	int r = impl->munmap(ctx, addr, length);
	if (r == 0 && addr == maps[i].addr && length >= maps[i].len)
		maps[i] = maps[--nmaps];
	respond(PECS_OP_MUNMAP, seq, r, NULL, 0);
}

static void serve_open(uint32_t seq, const uint8_t *b, const uint8_t *rest, size_t nrest)
{
	uint32_t kind = pecs_get_u32(b + 12);
	struct pecs_attr *attr = pointer(kind, rest, nrest);
	pid_t pid = (pid_t)pecs_get_u32(b);
	if (pid == 0 && as_caller && caller_tid > 0)
		pid = caller_tid;
	int r = impl->open(ctx, attr, pid, (int)pecs_get_u32(b + 4), (int)pecs_get_u32(b + 8),
			   (unsigned long)pecs_get_u64(b + 16));
	uint8_t size[4];
	pecs_put_u32(size, kind == PECS_PTR_BYTES ? attr->size : 0);
	respond(PECS_OP_OPEN, seq, r, size, sizeof(size));
}

static void serve_read(uint32_t seq, const uint8_t *b)
{
	static uint8_t out[PECS_PIPE_MAX_BUFFER];
	uint32_t kind = pecs_get_u32(b + 4);
	uint64_t count = pecs_get_u64(b + 8);
	if (count > sizeof(out))
		count = sizeof(out);
	void *buf = kind == PECS_PTR_BYTES ? out : pointer(kind, NULL, 0);
	ssize_t r = impl->read(ctx, (int)pecs_get_u32(b), buf, count);
	respond(PECS_OP_READ, seq, r, out, r > 0 && kind == PECS_PTR_BYTES ? (size_t)r : 0);
}

static void serve_write(uint32_t seq, const uint8_t *b, const uint8_t *rest, size_t nrest)
{
	if (!PECS_IMPL_HAS(impl, write)) {
		respond(PECS_OP_WRITE, seq, -ENOSYS, NULL, 0);
		return;
	}
	uint32_t kind = pecs_get_u32(b + 4);
	uint64_t count = pecs_get_u64(b + 8);
	const void *buf = kind == PECS_PTR_BYTES ? rest : pointer(kind, NULL, 0);
	if (kind == PECS_PTR_BYTES && count > nrest)
		count = nrest;
	respond(PECS_OP_WRITE, seq, impl->write(ctx, (int)pecs_get_u32(b), buf, count), NULL, 0);
}

static void serve_ioctl(uint32_t seq, const uint8_t *b, const uint8_t *rest, size_t nrest)
{
	uint32_t kind = pecs_get_u32(b + 4);
	unsigned long request = (unsigned long)pecs_get_u64(b + 8);
	unsigned long arg = kind == PECS_PTR_INTEGER ? (unsigned long)pecs_get_u64(b + 16)
						     : (unsigned long)pointer(kind, rest, nrest);
	int r = impl->ioctl(ctx, (int)pecs_get_u32(b), request, arg);
	respond(PECS_OP_IOCTL, seq, r, scratch, kind == PECS_PTR_BYTES ? nrest : 0);
}

static void serve(uint32_t op, uint32_t seq, const uint8_t *b, size_t len)
{
	/* Fixed parts are checked once here; a short request is the runner's bug. */
	static const size_t fixed[NOPS] = {
		[PECS_OP_HELLO] = 4, [PECS_OP_SETUP] = 8, [PECS_OP_OPEN] = 24, [PECS_OP_CLOSE] = 4,
		[PECS_OP_READ] = 16, [PECS_OP_WRITE] = 16, [PECS_OP_IOCTL] = 24,
		[PECS_OP_POLL] = 12, [PECS_OP_MMAP] = PECS_MMAP_REQ,
		[PECS_OP_MUNMAP] = PECS_MUNMAP_REQ,
	};
	if (op >= NOPS || !op_names[op]) {
		respond(op, seq, -ENOSYS, NULL, 0);
		return;
	}
	if (len < fixed[op]) {
		respond(op, seq, -EPROTO, NULL, 0);
		return;
	}
	const uint8_t *rest = b + fixed[op];
	size_t nrest = len - fixed[op];
	switch (op) {
	case PECS_OP_HELLO:
		hello(seq, b, len);
		return;
	case PECS_OP_HOST_FACTS:
		host_facts(seq);
		return;
	case PECS_OP_SETUP:
		unmap_all();
		if (ctx) /* the previous case's state, if the runner never tore it down */
			impl->teardown(ctx);
		ctx = NULL;
		caller_tid = (pid_t)pecs_get_u32(b + 4);
		respond(op, seq, impl->setup(&ctx), NULL, 0);
		return;
	case PECS_OP_TEARDOWN:
		unmap_all();
		impl->teardown(ctx);
		ctx = NULL;
		respond(op, seq, 0, NULL, 0);
		return;
	case PECS_OP_OPEN:
		serve_open(seq, b, rest, nrest);
		return;
	case PECS_OP_CLOSE:
		respond(op, seq, impl->close(ctx, (int)pecs_get_u32(b)), NULL, 0);
		return;
	case PECS_OP_READ:
		serve_read(seq, b);
		return;
	case PECS_OP_WRITE:
		serve_write(seq, b, rest, nrest);
		return;
	case PECS_OP_IOCTL:
		serve_ioctl(seq, b, rest, nrest);
		return;
	case PECS_OP_POLL:
		respond(op, seq,
			impl->poll(ctx, (int)pecs_get_u32(b), (short)pecs_get_u16(b + 4),
				   (int)pecs_get_u32(b + 8)),
			NULL, 0);
		return;
	case PECS_OP_MMAP:
		serve_mmap(seq, b);
		return;
	case PECS_OP_MUNMAP:
		serve_munmap(seq, b);
		return;
	}
}

/* ---- setup -------------------------------------------------------------------- */

/* Wall time, not CPU time: on loaded cores the spin must still end while the runner's
 * patience lasts. */
static void busy_past_deadline(void)
{
	const char *t = getenv("PECS_PIPE_TIMEOUT_MS");
	double ms = 2.5 * (t && atoi(t) > 0 ? atoi(t) : 10000), end;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 + ms;
	do
		clock_gettime(CLOCK_MONOTONIC, &ts);
	while ((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 < end);
}

static int op_by_name(const char *name)
{
	for (size_t i = 0; i < NOPS; i++)
		if (op_names[i] && strcmp(op_names[i], name) == 0)
			return (int)i;
	fprintf(stderr, "pipe_testee: unknown operation '%s'\n", name);
	exit(2);
}

static const struct pecs_impl *load_plugin(const char *path)
{
	void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!so) {
		fprintf(stderr, "pipe_testee: %s\n", dlerror());
		exit(2);
	}
	const struct pecs_impl *(*entry)(void) =
		(const struct pecs_impl *(*)(void))dlsym(so, "pecs_plugin_impl");
	if (!entry) {
		fprintf(stderr, "pipe_testee: %s exports no pecs_plugin_impl\n", path);
		exit(2);
	}
	return entry();
}

int main(int argc, char **argv)
{
	impl = pecs_adapter();
	for (int i = 1; i < argc; i++) {
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(argv[i], "--plugin") == 0 && next) {
			impl = load_plugin(argv[++i]);
			as_caller = 0; /* a plugin models its own tasks */
			fd_backed = 0;
		} else if (strcmp(argv[i], "--own-pid") == 0)
			as_caller = 0;
		else if (strcmp(argv[i], "--v1") == 0)
			only_v1 = 1;
		else if (strcmp(argv[i], "--die-at") == 0 && next)
			die_at = op_by_name(argv[++i]);
		else if (strcmp(argv[i], "--hang-at") == 0 && next)
			hang_at = op_by_name(argv[++i]);
		else if (strcmp(argv[i], "--garble-at") == 0 && next)
			garble_at = op_by_name(argv[++i]);
		else if (strcmp(argv[i], "--busy-at") == 0 && next)
			busy_at = op_by_name(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--plugin PATH] [--own-pid] [--v1] [--die-at OP] "
					"[--hang-at OP] [--garble-at OP] [--busy-at OP]\n", argv[0]);
			return 2;
		}
	}
	page_size = sysconf(_SC_PAGESIZE);
	bad_page = mmap(NULL, (size_t)page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	scratch = mmap(NULL, 2 * (size_t)page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bad_page == MAP_FAILED || scratch == MAP_FAILED)
		return 1;
	uint8_t *msg = malloc(PECS_PIPE_MAX_PAYLOAD);
	if (!msg)
		return 1;
	for (;;) {
		uint8_t len[4];
		if (read_full(len, sizeof(len)) < 0)
			return 0; /* the runner closed our stdin: done */
		uint32_t n = pecs_get_u32(len);
		if (n < PECS_REQ_HEAD || n > PECS_PIPE_MAX_PAYLOAD) {
			fprintf(stderr, "pipe_testee: bad frame length %u\n", n);
			return 1;
		}
		if (read_full(msg, n) < 0)
			return 1;
		uint32_t op = pecs_get_u32(msg), seq = pecs_get_u32(msg + 4);
		if ((int)op == die_at)
			exit(3);
		if ((int)op == hang_at)
			for (;;)
				pause();
		if ((int)op == garble_at)
			seq ^= 0x5a5a;
		if ((int)op == busy_at) {
			busy_past_deadline();
			busy_at = 0;
		}
		serve(op, seq, msg + PECS_REQ_HEAD, n - PECS_REQ_HEAD);
	}
}
