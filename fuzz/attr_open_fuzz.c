/* libFuzzer target: perf_event_open(2) on the reference engine through its public API
 * (pecs/ref.h), with the attr, pid, cpu, group and flags taken from the input, followed
 * by the calls a caller makes on what it got. Nothing may crash, read outside the attr
 * the caller sized, or leak once the engine is freed.
 *
 * Input: one policy byte, then up to MAX_OPS operations, each an opcode byte and its
 * operands (a missing operand reads as 0):
 *   policy   bits 0-1 paranoid - 1 (-1..2), bit 2 CAP_PERFMON, bit 3 CAP_SYS_ADMIN,
 *            bit 4 CAP_IPC_LOCK, bits 5-7 LSM denial of cpu-wide, kernel, ioctl
 *   op % 8   0, 1 open: pid choice, cpu (s8), group choice, flags, attr length, attr bytes
 *            2 close: fd choice
 *            3 read: fd choice, length (u16)
 *            4, 7 ioctl: fd choice, request choice, argument byte
 *            5 MODIFY_ATTRIBUTES: fd choice, attr length, attr bytes
 *            6 poll: fd choice
 * The attr bytes are copied into a buffer exactly as long as their size field claims
 * (64 for 0; 8 when the claim is outside 64..4096, as only the size word is read
 * then), zero past the given bytes.
 *
 * ref copies from the caller with process_vm_readv(2), which reads an ASan redzone
 * without complaint. A seccomp filter makes that call fail with ENOSYS here, so the
 * engine takes its memcpy fallback (ref/uaccess) and ASan sees every byte it reads.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "pecs/ref.h"

#define MAX_OPS 32
#define MAX_FDS 16
#define FIRST_FD 1000

struct cursor {
	const uint8_t *p;
	size_t left;
};

static uint8_t take8(struct cursor *c)
{
	if (!c->left)
		return 0;
	c->left--;
	return *c->p++;
}

static uint16_t take16(struct cursor *c)
{
	uint16_t lo = take8(c);

	return (uint16_t)(lo | take8(c) << 8);
}

static int checked(int ret, int ok_min)
{
	/* A call returns a value it documents or a negative errno, nothing else. */
	if (ret < ok_min && (ret >= 0 || ret < -4095))
		abort();
	return ret;
}

/* An attr the way a caller lays it out: a buffer of the size its size field claims. */
static struct pecs_attr *take_attr(struct cursor *c, size_t *buf_len)
{
	size_t given = take8(c), n;
	uint8_t head[8] = { 0 };
	uint32_t claim;
	uint8_t *buf;

	if (given > c->left)
		given = c->left;
	/* The size word as the engine will read it: given bytes, zeros after them. */
	memcpy(head, c->p, given < sizeof(head) ? given : sizeof(head));
	memcpy(&claim, head + 4, sizeof(claim));
	if (claim == 0)
		n = PECS_ATTR_SIZE_VER0;
	else if (claim < PECS_ATTR_SIZE_VER0 || claim > 4096)
		n = 8;
	else
		n = claim;
	buf = calloc(1, n);
	if (!buf)
		abort();
	memcpy(buf, c->p, given < n ? given : n);
	c->p += given;
	c->left -= given;
	*buf_len = n;
	return (struct pecs_attr *)buf;
}

static int pick_fd(const int *fds, size_t nr, uint8_t sel)
{
	/* With nothing open, an fd the engine never handed out. */
	return nr ? fds[sel % nr] : FIRST_FD + 100 + sel;
}

static pid_t pick_pid(uint8_t sel)
{
	switch (sel % 6) {
	case 0: return -1;
	case 1: return 0;
	case 2: return getpid();
	case 3: return 1;        /* another process */
	case 4: return 4194305;  /* above PID_MAX_LIMIT */
	default: return -2;
	}
}

static void do_open(struct ref_engine *e, struct cursor *c, int *fds, size_t *nr)
{
	pid_t pid = pick_pid(take8(c));
	int cpu = (int8_t)take8(c);
	uint8_t group_sel = take8(c);
	unsigned long flags = take8(c);
	int group_fd = group_sel & 0x80 ? -1 : pick_fd(fds, *nr, group_sel);
	size_t len;
	struct pecs_attr *attr = take_attr(c, &len);
	int fd;

	fd = checked(ref_engine_open(e, attr, pid, cpu, group_fd, flags), FIRST_FD);
	if (fd >= 0 && *nr < MAX_FDS)
		fds[(*nr)++] = fd;
	free(attr);
}

static void do_read(struct ref_engine *e, struct cursor *c, const int *fds, size_t nr)
{
	int fd = pick_fd(fds, nr, take8(c));
	size_t len = take16(c) % (16 * 1024 + 64);
	void *buf = malloc(len ? len : 1);
	ssize_t got;

	if (!buf)
		abort();
	got = ref_engine_read(e, fd, buf, len);
	if (got > (ssize_t)len || (got < 0 && got < -4095))
		abort();
	free(buf);
}

static void do_ioctl(struct ref_engine *e, struct cursor *c, const int *fds, size_t nr)
{
	static const unsigned long plain[] = {
		PECS_IOC_ENABLE, PECS_IOC_DISABLE, PECS_IOC_RESET, PECS_IOC_PAUSE_OUTPUT,
	};
	int fd = pick_fd(fds, nr, take8(c));
	uint8_t which = take8(c), arg = take8(c);
	uint64_t value = arg, id = 0;
	unsigned long request;
	unsigned long a;

	switch (which % 8) {
	case 4:
		request = PECS_IOC_REFRESH;
		a = arg;
		break;
	case 5:
		request = PECS_IOC_PERIOD;
		value = (uint64_t)arg << (arg % 57);
		a = (unsigned long)&value;
		break;
	case 6:
		request = PECS_IOC_ID;
		a = (unsigned long)&id;
		break;
	case 7:
		request = PECS_IOC_SET_OUTPUT;
		a = arg & 0x80 ? (unsigned long)-1 : (unsigned long)pick_fd(fds, nr, arg);
		break;
	default:
		request = plain[which % 4];
		a = arg & 1; /* PECS_IOC_FLAG_GROUP */
		break;
	}
	checked(ref_engine_ioctl(e, fd, request, a), 0);
}

static void do_modify(struct ref_engine *e, struct cursor *c, const int *fds, size_t nr)
{
	int fd = pick_fd(fds, nr, take8(c));
	size_t len;
	struct pecs_attr *attr = take_attr(c, &len);

	checked(ref_engine_ioctl(e, fd, PECS_IOC_MODIFY_ATTRIBUTES, (unsigned long)attr),
		      0);
	free(attr);
}

/* process_vm_readv/writev fail with ENOSYS from here on; everything else is allowed. */
static void deny_process_vm(void)
{
#if defined(__x86_64__)
	static struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	};
	struct sock_fprog prog = { sizeof(insns) / sizeof(insns[0]), insns };

	/* Without the filter the target still runs, with ASan blind to attr reads. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
		(void)prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
#endif
}

static struct ref_engine *engine_for(uint8_t b)
{
	static const uint32_t lsm[] = { REF_LSM_DENY_CPU, REF_LSM_DENY_KERNEL,
					REF_LSM_DENY_WRITE };
	struct ref_policy pol = { .size = sizeof(pol), .paranoid = (int)(b & 3) - 1 };
	/* Fixed limits: a run must not depend on the host's sysctls. */
	struct ref_config cfg = {
		.size = sizeof(cfg),
		.policy = &pol,
		.ncpus = 2,
		.page_size = 4096,
		.max_stack = 127,
		.max_sample_rate = 100000,
		.mlock_kb = 516,
		.first_fd = FIRST_FD,
	};

	pol.uid = getuid();
	if (b & 4)
		pol.caps |= REF_CAP_MASK(REF_CAP_PERFMON);
	if (b & 8)
		pol.caps |= REF_CAP_MASK(REF_CAP_SYS_ADMIN);
	if (b & 16)
		pol.caps |= REF_CAP_MASK(REF_CAP_IPC_LOCK);
	for (unsigned i = 0; i < 3; i++)
		if (b & (32u << i))
			pol.lsm_deny |= lsm[i];
	return ref_engine_new(&cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cursor c = { data, size };
	struct ref_engine *e;
	int fds[MAX_FDS];
	size_t nr = 0;

	static int once;

	if (!once) {
		deny_process_vm();
		once = 1;
	}
	if (size == 0)
		return 0;
	e = engine_for(take8(&c));
	if (!e)
		abort();
	for (int op = 0; op < MAX_OPS && c.left; op++) {
		switch (take8(&c) % 8) {
		case 0:
		case 1:
			do_open(e, &c, fds, &nr);
			break;
		case 2:
			checked(ref_engine_close(e, pick_fd(fds, nr, take8(&c))), 0);
			break;
		case 3:
			do_read(e, &c, fds, nr);
			break;
		case 5:
			do_modify(e, &c, fds, nr);
			break;
		case 6:
			checked(ref_engine_poll(e, pick_fd(fds, nr, take8(&c)), POLLIN, 0),
				      0);
			break;
		default:
			do_ioctl(e, &c, fds, nr);
			break;
		}
	}
	/* What is still open goes with the engine, as a process's fds go at exit. */
	ref_engine_free(e);
	return 0;
}
