/* An implementation in another process, in any language: the adapter starts $PECS_TESTEE
 * (a command line run by /bin/sh as `exec <command>`), and forwards every vtable call as a
 * length-prefixed request on the testee's stdin (a pipe), reading the response from its
 * stdout (one end of an AF_UNIX socketpair, so that version 2 can pass file descriptors)
 * (docs/testee-protocol.md).
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
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "pecs/impl.h"
#include "pipe_wire.h"

struct testee {
	pid_t pid;        /* the testee's process */
	pid_t owner;      /* the runner process that started it */
	int to, from;     /* its stdin (a pipe) and stdout (a socket) */
	uint32_t seq;
	unsigned int gen; /* bumped per testee started: mappings name the testee they share */
};

/* A mapping shared with the testee: our view of it, and its address over there. */
struct shared_map {
	void *addr;
	size_t len;
	uint64_t remote;
	unsigned int gen;
};

#define MAX_SHARED_MAPS 64

static struct testee conn = {.pid = -1, .to = -1, .from = -1};
static struct shared_map maps[MAX_SHARED_MAPS];
static size_t nmaps;
/* What HELLO settled on: the version every later testee of this run is offered. */
static uint32_t version = PECS_PIPE_VERSION;
static const char *command;
static pid_t main_pid;
static int timeout_ms = 10000;
static char impl_name[128];
static char *features_text;
static const char **features;

/* ---- process ------------------------------------------------------------------- */

static void drop(struct testee *t, int kill_it)
{
	if (t->to >= 0)
		close(t->to);
	if (t->from >= 0)
		close(t->from);
	if (t->pid > 0 && t->owner == getpid()) {
		if (kill_it)
			kill(t->pid, SIGKILL);
		/* Closing its stdin ends a healthy testee; wait briefly, then insist. */
		for (int i = 0; i < 200; i++) {
			if (waitpid(t->pid, NULL, WNOHANG) != 0)
				break;
			if (i == 199) {
				kill(t->pid, SIGKILL);
				waitpid(t->pid, NULL, 0);
			}
			usleep(1000);
		}
	}
	t->pid = -1;
	t->to = t->from = -1;
}

static int spawn(struct testee *t)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	/* A socket, not a pipe: only a socket carries SCM_RIGHTS, and version 1 testees
	 * cannot tell the difference when they write to it. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out) < 0) {
		int e = errno;
		close(in[0]);
		close(in[1]);
		return -e;
	}
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		return -e;
	}
	if (pid == 0) {
		/* The testee must not outlive the process that talks to it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		dup2(in[0], 0);
		dup2(out[1], 1);
		char *cmd;
		if (asprintf(&cmd, "exec %s", command) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->pid = pid;
	t->owner = parent;
	t->gen++;
	t->to = in[1];
	t->from = out[0];
	fcntl(t->to, F_SETFL, O_NONBLOCK);
	fcntl(t->from, F_SETFL, O_NONBLOCK);
	return 0;
}

/* How the testee ended, for the message; reaps it when it has exited. */
static void describe_exit(struct testee *t, char *buf, size_t len)
{
	int ws;
	pid_t r = 0;
	for (int i = 0; i < 100 && r == 0; i++) {
		r = waitpid(t->pid, &ws, WNOHANG);
		if (r == 0)
			usleep(1000);
	}
	if (r == t->pid && WIFEXITED(ws))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(ws));
	else if (r == t->pid && WIFSIGNALED(ws))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(ws),
			 strsignal(WTERMSIG(ws)));
	else
		snprintf(buf, len, "closed its stdout");
	if (r == t->pid)
		t->pid = -1;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *op_name(uint32_t op)
{
	static const char *const names[] = {
		[PECS_OP_HELLO] = "HELLO", [PECS_OP_HOST_FACTS] = "HOST_FACTS",
		[PECS_OP_SETUP] = "SETUP", [PECS_OP_TEARDOWN] = "TEARDOWN",
		[PECS_OP_OPEN] = "OPEN",   [PECS_OP_CLOSE] = "CLOSE",
		[PECS_OP_READ] = "READ",   [PECS_OP_WRITE] = "WRITE",
		[PECS_OP_IOCTL] = "IOCTL", [PECS_OP_POLL] = "POLL",
		[PECS_OP_MMAP] = "MMAP",   [PECS_OP_MUNMAP] = "MUNMAP",
	};
	return op < sizeof(names) / sizeof(names[0]) && names[op] ? names[op] : "?";
}

/* ---- framing ------------------------------------------------------------------- */

enum failure { OK = 0, GONE, LATE, GARBLED };

static enum failure write_all(struct testee *t, const uint8_t *p, size_t n, double deadline)
{
	while (n > 0) {
		ssize_t w = write(t->to, p, n);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EPIPE)
			return GONE;
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return GONE;
		int left = (int)(deadline - now_ms());
		if (left <= 0)
			return LATE;
		struct pollfd pfd = {.fd = t->to, .events = POLLOUT};
		if (poll(&pfd, 1, left) == 0)
			return LATE;
	}
	return OK;
}

/* Keeps the first fd a response carries in *fd and closes any other: a testee must not
 * make the runner leak descriptors by sending more than it was asked for. */
static void take_fds(struct msghdr *msg, int *fd)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int got;
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(got));
			if (*fd < 0)
				*fd = got;
			else
				close(got);
		}
	}
}

static enum failure read_all(struct testee *t, uint8_t *p, size_t n, double deadline, int *fd)
{
	while (n > 0) {
		union {
			struct cmsghdr align;
			char buf[CMSG_SPACE(8 * sizeof(int))];
		} control;
		struct iovec iov = {.iov_base = p, .iov_len = n};
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = control.buf, .msg_controllen = sizeof(control.buf)};
		ssize_t r = recvmsg(t->from, &msg, MSG_CMSG_CLOEXEC);
		if (r > 0) {
			take_fds(&msg, fd);
			p += r;
			n -= (size_t)r;
			continue;
		}
		if (r == 0 || (errno != EAGAIN && errno != EINTR))
			return GONE;
		int left = (int)(deadline - now_ms());
		if (left <= 0)
			return LATE;
		struct pollfd pfd = {.fd = t->from, .events = POLLIN};
		if (poll(&pfd, 1, left) == 0)
			return LATE;
	}
	return OK;
}

struct response {
	int64_t ret;
	uint8_t *body;
	size_t len;
	int fd; /* MMAP only: the fd behind the testee's mapping */
};

/* The testee failed this process: say why, then end the case as documented above. */
static long give_up(struct testee *t, enum failure f, uint32_t op, int wait_ms)
{
	char why[160];
	int sig = SIGPIPE;
	long err = -EPIPE;
	if (f == LATE) {
		snprintf(why, sizeof(why), "did not answer within %d ms (killed)", wait_ms);
		sig = SIGALRM;
		err = -ETIMEDOUT;
		kill(t->pid, SIGKILL);
	} else if (f == GARBLED) {
		snprintf(why, sizeof(why), "sent a malformed response (killed)");
		err = -EPROTO;
		kill(t->pid, SIGKILL);
	} else {
		describe_exit(t, why, sizeof(why));
	}
	fprintf(stderr, "pecs-pipe: testee '%s' %s during %s\n", command, why, op_name(op));
	drop(t, 1);
	if (getpid() != main_pid) {
		/* An isolated case: its process dies by the signal that names the cause. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return err;
}

/* One request and its response. Returns 0, or -errno when the testee failed. */
static long call(uint32_t op, const uint8_t *body, size_t len, struct response *resp,
		 int extra_ms)
{
	struct testee *t = &conn;
	resp->body = NULL;
	resp->len = 0;
	resp->fd = -1;
	if (t->pid < 0 || t->owner != getpid()) {
		/* A forked child must not touch its parent's stream. */
		if (t->owner != getpid()) {
			if (t->to >= 0)
				close(t->to);
			if (t->from >= 0)
				close(t->from);
			t->pid = -1;
		}
		int err = spawn(t);
		if (err < 0) {
			fprintf(stderr, "pecs-pipe: cannot start testee '%s': %s\n", command,
				strerror(-err));
			return err;
		}
		/* A new testee knows nothing: greet it, as the protocol requires first. */
		if (op != PECS_OP_HELLO) {
			uint8_t v[4];
			pecs_put_u32(v, version);
			struct response hello;
			long r = call(PECS_OP_HELLO, v, sizeof(v), &hello, 0);
			if (r < 0)
				return r;
			free(hello.body);
			/* The first testee agreed to this version; its successor must too, or
			 * the mappings the case makes would mean something else. */
			if (hello.ret != (int64_t)version)
				return give_up(t, GARBLED, PECS_OP_HELLO, timeout_ms);
		}
	}
	int wait_ms = timeout_ms + (extra_ms > 0 ? extra_ms : 0);
	double deadline = now_ms() + wait_ms;
	size_t total = PECS_REQ_HEAD + len;
	uint8_t *frame = malloc(4 + total);
	if (!frame)
		return -ENOMEM;
	pecs_put_u32(frame, (uint32_t)total);
	pecs_put_u32(frame + 4, op);
	pecs_put_u32(frame + 8, ++t->seq);
	if (len)
		memcpy(frame + 4 + PECS_REQ_HEAD, body, len);
	enum failure f = write_all(t, frame, 4 + total, deadline);
	free(frame);
	uint8_t head[4 + PECS_RESP_HEAD];
	int fd = -1;
	if (f == OK)
		f = read_all(t, head, sizeof(head), deadline, &fd);
	uint32_t plen = f == OK ? pecs_get_u32(head) : 0;
	if (f == OK && (plen < PECS_RESP_HEAD || plen > PECS_PIPE_MAX_PAYLOAD ||
			pecs_get_u32(head + 4) != op || pecs_get_u32(head + 8) != t->seq))
		f = GARBLED;
	if (f == OK && plen > PECS_RESP_HEAD) {
		resp->len = plen - PECS_RESP_HEAD;
		resp->body = malloc(resp->len);
		if (!resp->body)
			return -ENOMEM;
		f = read_all(t, resp->body, resp->len, deadline, &fd);
	}
	int64_t ret = f == OK ? (int64_t)pecs_get_u64(head + 12) : -1;
	/* A mapping made over there is useless here without its fd and address. */
	if (f == OK && op == PECS_OP_MMAP && ret == 0 && (fd < 0 || resp->len < PECS_MMAP_RESP))
		f = GARBLED;
	if (fd >= 0 && (f != OK || op != PECS_OP_MMAP || ret != 0)) {
		close(fd);
		fd = -1;
	}
	if (f != OK) {
		free(resp->body);
		resp->body = NULL;
		resp->len = 0;
		return give_up(t, f, op, wait_ms);
	}
	resp->ret = ret;
	resp->fd = fd;
	return 0;
}

/* A call whose only answer is its return value. */
static long simple(uint32_t op, const uint8_t *body, size_t len, int extra_ms)
{
	struct response r;
	long err = call(op, body, len, &r, extra_ms);
	free(r.body);
	return err < 0 ? err : (long)r.ret;
}

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
	return (int)simple(PECS_OP_SETUP, req, sizeof(req), 0);
}

static void p_teardown(void *ctx)
{
	(void)ctx;
	simple(PECS_OP_TEARDOWN, NULL, 0, 0);
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
	struct response r;
	long err = call(PECS_OP_OPEN, req, 24 + n, &r, 0);
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
	return (int)simple(PECS_OP_CLOSE, req, sizeof(req), 0);
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
	struct response r;
	long err = call(PECS_OP_READ, req, sizeof(req), &r, 0);
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
	long ret = simple(PECS_OP_WRITE, req, 16 + (kind == PECS_PTR_BYTES ? count : 0), 0);
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
	struct response r;
	long err = call(PECS_OP_IOCTL, req, 24 + n, &r, 0);
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
	struct response r;
	long err = call(PECS_OP_MUNMAP, req, sizeof(req), &r, 0);
	free(r.body);
	*ret = err < 0 ? err : (long)r.ret;
	return err;
}

static int p_mmap(void *ctx, int fd, size_t length, int prot, int flags, off_t offset,
		  void **addr)
{
	(void)ctx;
	if (version < 2)
		return -ENODEV; /* protocol v1 carries no shared memory */
	uint8_t req[PECS_MMAP_REQ];
	pecs_put_u32(req, (uint32_t)fd);
	pecs_put_u32(req + 4, (uint32_t)prot);
	pecs_put_u32(req + 8, (uint32_t)flags);
	pecs_put_u32(req + 12, 0);
	pecs_put_u64(req + 16, length);
	pecs_put_u64(req + 24, (uint64_t)offset);
	struct response r;
	long err = call(PECS_OP_MMAP, req, sizeof(req), &r, 0);
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
	void *p = mmap(NULL, length, prot, flags, r.fd, fd_offset);
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
					    .gen = conn.gen};
	*addr = p;
	return 0;
}

static int p_munmap(void *ctx, void *addr, size_t length)
{
	(void)ctx;
	if (version < 2)
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
	if (m->gen == conn.gen && conn.pid > 0 && conn.owner == getpid())
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
	return (int)simple(PECS_OP_POLL, req, sizeof(req), poll_timeout_ms);
}

static int p_host_facts(void *ctx, struct pecs_host_facts *f)
{
	(void)ctx;
	struct response r;
	long err = call(PECS_OP_HOST_FACTS, NULL, 0, &r, 0);
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
};

/* Features the pipe cannot carry: the vtable's optional inject_sample and set_profiler
 * have no operation, and a version 1 testee cannot share its mappings. */
static int cannot_carry(const char *f)
{
	static const char *const never[] = {"engine.inject", "profiler.replay", NULL};
	static const char *const v1_cannot[] = {"mmap", "mmap.overwrite", NULL};
	for (const char *const *p = never; *p; p++)
		if (strcmp(*p, f) == 0)
			return 1;
	for (const char *const *p = v1_cannot; *p && version < 2; p++)
		if (strcmp(*p, f) == 0)
			return 1;
	return 0;
}

/* "name\nfeature\nfeature\n" from the HELLO response. */
static int parse_hello(const struct response *r)
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
				f, version);
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
	if (t && atoi(t) > 0)
		timeout_ms = atoi(t);
	main_pid = getpid();
	/* A testee that has gone away must fail the call, not kill the runner. */
	signal(SIGPIPE, SIG_IGN);
	uint8_t v[4];
	pecs_put_u32(v, PECS_PIPE_VERSION);
	struct response r;
	if (call(PECS_OP_HELLO, v, sizeof(v), &r, 0) < 0)
		fail_setup("the testee did not answer HELLO (see above): %s", command);
	/* A version 1 testee refuses any other number; offer it 1 on the same stream. */
	if (r.ret == -EPROTONOSUPPORT) {
		free(r.body);
		pecs_put_u32(v, PECS_PIPE_VERSION_MIN);
		if (call(PECS_OP_HELLO, v, sizeof(v), &r, 0) < 0)
			fail_setup("the testee did not answer HELLO (see above): %s", command);
	}
	if (r.ret < PECS_PIPE_VERSION_MIN || r.ret > PECS_PIPE_VERSION) {
		free(r.body);
		fail_setup("the testee refused protocol versions %u to %u: %s", PECS_PIPE_VERSION_MIN,
			   PECS_PIPE_VERSION, command);
	}
	version = (uint32_t)r.ret;
	if (parse_hello(&r) < 0) {
		free(r.body);
		fail_setup("the testee's HELLO names no implementation: %s", command);
	}
	free(r.body);
	pipe_impl.name = impl_name;
	pipe_impl.features = features;
	return &pipe_impl;
}
