/* The testee process and the frames to and from it: its stdin is a pipe, its stdout one end
 * of an AF_UNIX socketpair, so that version 2 can pass file descriptors (SCM_RIGHTS).
 *
 * Every request has a deadline (the configured timeout plus a poll's own), extended while
 * the testee is visibly working (see struct deadline). A testee that exits, misses its
 * deadline or sends a malformed frame ends the call: inside an isolated
 * child the adapter names the cause on stderr and dies by SIGPIPE (testee gone) or SIGALRM
 * (deadline), which the runner reports as CRASH; in the main process the call returns
 * -EPIPE, -ETIMEDOUT or -EPROTO and the next call starts a new testee.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "pipe_transport.h"
#include "pipe_wire.h"

struct testee {
	pid_t pid;        /* the testee's process */
	pid_t owner;      /* the runner process that started it */
	int to, from;     /* its stdin (a pipe) and stdout (a socket) */
	uint32_t seq;
	unsigned int gen; /* bumped per testee started: mappings name the testee they share */
};

static struct testee conn = {.pid = -1, .to = -1, .from = -1};
/* What HELLO settled on: the version every later testee of this run is offered. */
static uint32_t version = PECS_PIPE_VERSION;
static const char *command;
static pid_t main_pid;
static int timeout_ms = 10000;

void pipe_transport_init(const char *cmd, int timeout)
{
	command = cmd;
	timeout_ms = timeout;
	main_pid = getpid();
	/* A testee that has gone away must fail the call, not kill the runner. */
	signal(SIGPIPE, SIG_IGN);
}

void pipe_transport_set_version(uint32_t v)
{
	version = v;
}

uint32_t pipe_transport_version(void)
{
	return version;
}

unsigned int pipe_transport_testee(void)
{
	return conn.pid > 0 && conn.owner == getpid() ? conn.gen : 0;
}

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

/* A request's deadline. Missing it means the testee hangs only if it is not working:
 * one that is runnable, or has used CPU since the deadline was last set, is slow (a
 * sanitizer build starting on loaded cores took over 10 s to answer HELLO) and gets the
 * timeout again, up to PATIENCE times in all. A testee asleep without progress, or still
 * spinning after the last extension, is late. */
#define PATIENCE 12

struct deadline {
	double at;
	int wait_ms;
	int extended;
	uint64_t cpu; /* the testee's utime + stime, in clock ticks, when last set */
};

/* The testee's state letter and CPU ticks from /proc; 0 when /proc cannot say (then a
 * missed deadline is final, as it was before this check). */
static char testee_progress(pid_t pid, uint64_t *cpu)
{
	char path[64], buf[512], *p, state;
	unsigned long long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* the command name may hold ") ": the fields start after the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &state, &ut, &st) != 3)
		return 0;
	*cpu = ut + st;
	return state;
}

static struct deadline deadline_in(const struct testee *t, int wait_ms)
{
	struct deadline d = {.at = now_ms() + wait_ms, .wait_ms = wait_ms};

	testee_progress(t->pid, &d.cpu);
	return d;
}

/* 1 when the deadline has passed for good; else 0, with the deadline moved on. */
static int deadline_missed(const struct testee *t, struct deadline *d)
{
	uint64_t cpu = 0;
	char state;

	if (now_ms() < d->at)
		return 0;
	state = testee_progress(t->pid, &cpu);
	if (d->extended + 1 >= PATIENCE || !state ||
	    (state != 'R' && state != 'D' && cpu == d->cpu))
		return 1;
	d->extended++;
	d->cpu = cpu;
	d->at = now_ms() + d->wait_ms;
	return 0;
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

enum failure { OK = 0, GONE, LATE, GARBLED, NO_MEMORY };

static enum failure write_all(struct testee *t, const uint8_t *p, size_t n, struct deadline *d)
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
		if (deadline_missed(t, d))
			return LATE;
		struct pollfd pfd = {.fd = t->to, .events = POLLOUT};
		poll(&pfd, 1, (int)(d->at - now_ms()) + 1);
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

static enum failure read_all(struct testee *t, uint8_t *p, size_t n, struct deadline *d,
			     int *fd)
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
		if (deadline_missed(t, d))
			return LATE;
		struct pollfd pfd = {.fd = t->from, .events = POLLIN};
		poll(&pfd, 1, (int)(d->at - now_ms()) + 1);
	}
	return OK;
}

/* Writes one request frame and reads its response into *resp (body, ret and any fd the
 * response carried), checking only the framing: length, op and sequence number. */
static enum failure exchange(struct testee *t, uint32_t op, const void *body, size_t len,
			     struct deadline *d, struct pipe_response *resp)
{
	size_t total = PECS_REQ_HEAD + len;
	uint8_t *frame = malloc(4 + total);
	if (!frame)
		return NO_MEMORY;
	pecs_put_u32(frame, (uint32_t)total);
	pecs_put_u32(frame + 4, op);
	pecs_put_u32(frame + 8, ++t->seq);
	if (len)
		memcpy(frame + 4 + PECS_REQ_HEAD, body, len);
	enum failure f = write_all(t, frame, 4 + total, d);
	free(frame);
	uint8_t head[4 + PECS_RESP_HEAD];
	if (f == OK)
		f = read_all(t, head, sizeof(head), d, &resp->fd);
	uint32_t plen = f == OK ? pecs_get_u32(head) : 0;
	if (f == OK && (plen < PECS_RESP_HEAD || plen > PECS_PIPE_MAX_PAYLOAD ||
			pecs_get_u32(head + 4) != op || pecs_get_u32(head + 8) != t->seq))
		f = GARBLED;
	if (f == OK && plen > PECS_RESP_HEAD) {
		resp->len = plen - PECS_RESP_HEAD;
		resp->body = malloc(resp->len);
		f = resp->body ? read_all(t, resp->body, resp->len, d, &resp->fd) : NO_MEMORY;
	}
	if (f == OK)
		resp->ret = (int64_t)pecs_get_u64(head + 12);
	return f;
}

/* ---- calls --------------------------------------------------------------------- */

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

/* Makes sure this process has a testee of its own, started and greeted, before a request
 * other than HELLO goes out. 0, or -errno. */
static long ensure_testee(struct testee *t, uint32_t op)
{
	if (t->pid >= 0 && t->owner == getpid())
		return 0;
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
	if (op == PECS_OP_HELLO)
		return 0;
	/* A new testee knows nothing: greet it, as the protocol requires first. */
	uint8_t v[4];
	pecs_put_u32(v, version);
	struct pipe_response hello;
	long r = pipe_call(PECS_OP_HELLO, v, sizeof(v), &hello, 0);
	if (r < 0)
		return r;
	free(hello.body);
	/* The first testee agreed to this version; its successor must too, or the mappings
	 * the case makes would mean something else. */
	if (hello.ret != (int64_t)version)
		return give_up(t, GARBLED, PECS_OP_HELLO, timeout_ms);
	return 0;
}

long pipe_call(uint32_t op, const void *body, size_t len, struct pipe_response *resp,
	       int extra_ms)
{
	struct testee *t = &conn;
	resp->body = NULL;
	resp->len = 0;
	resp->fd = -1;
	long err = ensure_testee(t, op);
	if (err < 0)
		return err;
	int wait_ms = timeout_ms + (extra_ms > 0 ? extra_ms : 0);
	struct deadline d = deadline_in(t, wait_ms);
	enum failure f = exchange(t, op, body, len, &d, resp);
	/* A mapping made over there is useless here without its fd and address. */
	if (f == OK && op == PECS_OP_MMAP && resp->ret == 0 &&
	    (resp->fd < 0 || resp->len < PECS_MMAP_RESP))
		f = GARBLED;
	if (resp->fd >= 0 && (f != OK || op != PECS_OP_MMAP || resp->ret != 0)) {
		close(resp->fd);
		resp->fd = -1;
	}
	if (f != OK) {
		free(resp->body);
		resp->body = NULL;
		resp->len = 0;
		return f == NO_MEMORY ? -ENOMEM : give_up(t, f, op, wait_ms * (d.extended + 1));
	}
	return 0;
}

long pipe_call_simple(uint32_t op, const void *body, size_t len, int extra_ms)
{
	struct pipe_response r;
	long err = pipe_call(op, body, len, &r, extra_ms);
	free(r.body);
	return err < 0 ? err : (long)r.ret;
}
