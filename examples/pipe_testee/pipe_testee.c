/* A pipe testee (docs/testee-protocol.md): serves one struct pecs_impl on stdin/stdout.
 * By default the implementation is the real kernel (the syscall adapter linked in);
 * --plugin PATH serves a plugin's vtable instead. The pecs-pipe runner drives it, and the
 * harness compares its verdicts with the in-process runner's.
 *
 *   pipe_testee [--plugin PATH] [--own-pid] [--die-at OP] [--hang-at OP] [--garble-at OP]
 *
 * Serving the kernel, it opens "pid 0" events on the runner's thread (SETUP names it): a
 * case burns CPU in the runner and expects its own events to count it. --own-pid keeps
 * pid 0 as the testee's own thread.
 *
 * The --*-at options make it misbehave on the first request of operation OP (open, read,
 * ioctl, ...): exit with status 3, stop answering, or answer with a wrong sequence number.
 * They exist so that tests can prove the runner's verdicts for a broken testee.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
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
};
#define NOPS (sizeof(op_names) / sizeof(op_names[0]))

static const struct pecs_impl *impl;
static void *ctx;
static void *bad_page; /* PROT_NONE: what a caller's inaccessible pointer becomes here */
static uint8_t *scratch; /* two pages for pointer arguments */
static long page_size;
static int die_at, hang_at, garble_at;
/* Serving the kernel, "pid 0" in a case means the runner's thread, not ours. */
static int as_caller = 1;
static pid_t caller_tid;

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

static void respond(uint32_t op, uint32_t seq, int64_t ret, const void *body, size_t len)
{
	uint8_t head[4 + PECS_RESP_HEAD];
	pecs_put_u32(head, (uint32_t)(PECS_RESP_HEAD + len));
	pecs_put_u32(head + 4, op);
	pecs_put_u32(head + 8, seq);
	pecs_put_u64(head + 12, (uint64_t)ret);
	write_full(head, sizeof(head));
	if (len)
		write_full(body, len);
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

/* Features this testee cannot serve through protocol v1, which has no shared memory:
 * their cases need the event's buffer mapped into the runner. */
static int unservable(const char *f)
{
	static const char *const list[] = {"mmap", "mmap.overwrite", "sampling",
					    "ioctl.set_output", "ioctl.pause_output",
					    "engine.inject", "profiler.replay", NULL};
	for (const char *const *p = list; *p; p++)
		if (strcmp(*p, f) == 0)
			return 1;
	return 0;
}

static void hello(uint32_t seq, const uint8_t *b, size_t len)
{
	if (len < 4 || pecs_get_u32(b) != PECS_PIPE_VERSION) {
		respond(PECS_OP_HELLO, seq, -EPROTONOSUPPORT, NULL, 0);
		return;
	}
	char text[4096];
	int n = snprintf(text, sizeof(text), "%s\n", impl->name);
	for (const char *const *f = impl->features; f && *f && n < (int)sizeof(text); f++)
		if (!unservable(*f))
			n += snprintf(text + n, sizeof(text) - (size_t)n, "%s\n", *f);
	if (n >= (int)sizeof(text))
		n = (int)sizeof(text) - 1;
	respond(PECS_OP_HELLO, seq, PECS_PIPE_VERSION, text, (size_t)n);
}

static void serve(uint32_t op, uint32_t seq, const uint8_t *b, size_t len)
{
	static uint8_t out[PECS_PIPE_MAX_BUFFER];
	/* Fixed parts are checked once here; a short request is the runner's bug. */
	static const size_t fixed[NOPS] = {
		[PECS_OP_HELLO] = 4, [PECS_OP_SETUP] = 8, [PECS_OP_OPEN] = 24, [PECS_OP_CLOSE] = 4,
		[PECS_OP_READ] = 16, [PECS_OP_WRITE] = 16, [PECS_OP_IOCTL] = 24,
		[PECS_OP_POLL] = 12,
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
		if (ctx) /* the previous case's state, if the runner never tore it down */
			impl->teardown(ctx);
		ctx = NULL;
		caller_tid = (pid_t)pecs_get_u32(b + 4);
		respond(op, seq, impl->setup(&ctx), NULL, 0);
		return;
	case PECS_OP_TEARDOWN:
		impl->teardown(ctx);
		ctx = NULL;
		respond(op, seq, 0, NULL, 0);
		return;
	case PECS_OP_OPEN: {
		uint32_t kind = pecs_get_u32(b + 12);
		struct pecs_attr *attr = pointer(kind, rest, nrest);
		pid_t pid = (pid_t)pecs_get_u32(b);
		if (pid == 0 && as_caller && caller_tid > 0)
			pid = caller_tid;
		int r = impl->open(ctx, attr, pid, (int)pecs_get_u32(b + 4),
				   (int)pecs_get_u32(b + 8), (unsigned long)pecs_get_u64(b + 16));
		uint8_t size[4];
		pecs_put_u32(size, kind == PECS_PTR_BYTES ? attr->size : 0);
		respond(op, seq, r, size, sizeof(size));
		return;
	}
	case PECS_OP_CLOSE:
		respond(op, seq, impl->close(ctx, (int)pecs_get_u32(b)), NULL, 0);
		return;
	case PECS_OP_READ: {
		uint32_t kind = pecs_get_u32(b + 4);
		uint64_t count = pecs_get_u64(b + 8);
		if (count > sizeof(out))
			count = sizeof(out);
		void *buf = kind == PECS_PTR_BYTES ? out : pointer(kind, NULL, 0);
		ssize_t r = impl->read(ctx, (int)pecs_get_u32(b), buf, count);
		respond(op, seq, r, out, r > 0 && kind == PECS_PTR_BYTES ? (size_t)r : 0);
		return;
	}
	case PECS_OP_WRITE: {
		if (!PECS_IMPL_HAS(impl, write)) {
			respond(op, seq, -ENOSYS, NULL, 0);
			return;
		}
		uint32_t kind = pecs_get_u32(b + 4);
		uint64_t count = pecs_get_u64(b + 8);
		const void *buf = kind == PECS_PTR_BYTES ? rest : pointer(kind, NULL, 0);
		if (kind == PECS_PTR_BYTES && count > nrest)
			count = nrest;
		respond(op, seq, impl->write(ctx, (int)pecs_get_u32(b), buf, count), NULL, 0);
		return;
	}
	case PECS_OP_IOCTL: {
		uint32_t kind = pecs_get_u32(b + 4);
		unsigned long request = (unsigned long)pecs_get_u64(b + 8);
		unsigned long arg = kind == PECS_PTR_INTEGER
					    ? (unsigned long)pecs_get_u64(b + 16)
					    : (unsigned long)pointer(kind, rest, nrest);
		int r = impl->ioctl(ctx, (int)pecs_get_u32(b), request, arg);
		respond(op, seq, r, scratch, kind == PECS_PTR_BYTES ? nrest : 0);
		return;
	}
	case PECS_OP_POLL:
		respond(op, seq,
			impl->poll(ctx, (int)pecs_get_u32(b), (short)pecs_get_u16(b + 4),
				   (int)pecs_get_u32(b + 8)),
			NULL, 0);
		return;
	}
}

/* ---- setup -------------------------------------------------------------------- */

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
		} else if (strcmp(argv[i], "--own-pid") == 0)
			as_caller = 0;
		else if (strcmp(argv[i], "--die-at") == 0 && next)
			die_at = op_by_name(argv[++i]);
		else if (strcmp(argv[i], "--hang-at") == 0 && next)
			hang_at = op_by_name(argv[++i]);
		else if (strcmp(argv[i], "--garble-at") == 0 && next)
			garble_at = op_by_name(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--plugin PATH] [--own-pid] [--die-at OP] [--hang-at OP] "
					"[--garble-at OP]\n", argv[0]);
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
		serve(op, seq, msg + PECS_REQ_HEAD, n - PECS_REQ_HEAD);
	}
}
