/* Writing a conformance case.
 *
 * A case is a function that drives an implementation through struct pecs_t and ends
 * with a verdict; it never aborts the process. The PECS_CHECK* macros record a failure
 * and return from the case, so a case reads top to bottom as its assertions. Every fd
 * and mapping made through pecs_open()/pecs_mmap() is released by the framework after
 * the case, whichever way it ended.
 *
 *   PECS_CASE(read_disabled_zero, "Required.Read.Disabled.ValuesZero",
 *             "counting", "READ-DISABLED-ZERO")
 *   {
 *           struct pecs_attr a;
 *           pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
 *           int fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
 *           ...
 *   }
 */
#ifndef PECS_CASE_H
#define PECS_CASE_H

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>

#include "pecs/abi.h"
#include "pecs/impl.h"

enum pecs_status {
	PECS_PASS = 0,
	PECS_FAIL,
	PECS_XFAIL,
	PECS_XPASS,
	PECS_UNSUPPORTED,
	PECS_ENV_SKIP,
	PECS_BROKEN,
	PECS_CRASH, /* only the harness gives this: the case killed its process */
	PECS_STATUS_COUNT
};

struct pecs_t; /* one running case; opaque to cases */

struct pecs_case {
	const char *id;         /* Required.Area.Topic.Name, stable forever */
	const char *features;   /* comma-separated names from docs/features.txt; "" for none */
	const char *behaviours; /* comma-separated ids from docs/behaviours.md */
	void (*fn)(struct pecs_t *t);
	const char *file;
	int line;
};

/* Cases register themselves in a linker section, so adding a case is adding a file
 * (the library that holds them must be linked whole: alwayslink in Bazel). */
#define PECS_CASE(fn_name, id_, features_, behaviours_)                                    \
	static void fn_name(struct pecs_t *t);                                             \
	static const struct pecs_case fn_name##_def = {id_, features_, behaviours_,        \
						       fn_name, __FILE__, __LINE__};       \
	static const struct pecs_case *const fn_name##_ptr                                 \
		__attribute__((used, section("pecs_cases"))) = &fn_name##_def;             \
	static void fn_name(struct pecs_t *t)

/* ---- verdicts ------------------------------------------------------------------ */

/* Record the verdict; the first non-PASS verdict of a case wins. */
void pecs_verdict(struct pecs_t *t, enum pecs_status status, const char *file, int line,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int pecs_failed(const struct pecs_t *t); /* any non-PASS verdict recorded */

#define PECS_FAIL_(t, ...) pecs_verdict((t), PECS_FAIL, __FILE__, __LINE__, __VA_ARGS__)

/* End the case: the host cannot run it (say why: "needs root", "perf_event_paranoid=3"). */
#define PECS_ENV_SKIP(t, ...)                                                   \
	do {                                                                    \
		pecs_verdict((t), PECS_ENV_SKIP, __FILE__, __LINE__, __VA_ARGS__); \
		return;                                                         \
	} while (0)

/* End the case: its setup failed, so it says nothing about the behaviour. */
#define PECS_BROKEN(t, ...)                                                     \
	do {                                                                    \
		pecs_verdict((t), PECS_BROKEN, __FILE__, __LINE__, __VA_ARGS__);   \
		return;                                                         \
	} while (0)

/* End the case: the implementation lacks an optional entry. Turns into FAIL when the
 * implementation claims every feature the case declares. */
#define PECS_UNSUPPORTED(t, ...)                                                    \
	do {                                                                        \
		pecs_verdict((t), PECS_UNSUPPORTED, __FILE__, __LINE__, __VA_ARGS__); \
		return;                                                             \
	} while (0)

#define PECS_CHECK(t, cond, ...)                \
	do {                                    \
		if (!(cond)) {                  \
			PECS_FAIL_((t), __VA_ARGS__); \
			return;                 \
		}                               \
	} while (0)

/* Integer equality, both values printed in decimal and hex. */
#define PECS_CHECK_EQ(t, actual, expected)                                                 \
	do {                                                                               \
		long long pecs_a_ = (long long)(actual), pecs_e_ = (long long)(expected);  \
		if (pecs_a_ != pecs_e_) {                                                  \
			PECS_FAIL_((t), "%s = %lld (0x%llx), expected %s = %lld (0x%llx)", \
				   #actual, pecs_a_, (unsigned long long)pecs_a_, #expected,  \
				   pecs_e_, (unsigned long long)pecs_e_);                  \
			return;                                                            \
		}                                                                          \
	} while (0)

/* A call that must fail with exactly -err (for example -EINVAL). */
#define PECS_CHECK_ERR(t, call, err)                                                     \
	do {                                                                             \
		long long pecs_r_ = (long long)(call);                                   \
		if (pecs_r_ != -(long long)(err)) {                                      \
			PECS_FAIL_((t), "%s returned %s, expected %s", #call,            \
				   pecs_retname(pecs_r_), pecs_errname(err));            \
			return;                                                          \
		}                                                                        \
	} while (0)

/* A call that must succeed (>= 0). */
#define PECS_CHECK_OK(t, call)                                                        \
	do {                                                                          \
		long long pecs_r_ = (long long)(call);                                \
		if (pecs_r_ < 0) {                                                    \
			PECS_FAIL_((t), "%s failed: %s", #call, pecs_retname(pecs_r_)); \
			return;                                                       \
		}                                                                     \
	} while (0)

/* Byte equality; the message names the first differing offset. */
#define PECS_CHECK_MEM(t, actual, expected, len)                                       \
	do {                                                                           \
		long pecs_off_ = pecs_memdiff((actual), (expected), (len));            \
		if (pecs_off_ >= 0) {                                                  \
			PECS_FAIL_((t), "%s differs from %s at byte %ld of %zu: %s",   \
				   #actual, #expected, pecs_off_, (size_t)(len),      \
				   pecs_hexdiff((actual), (expected), (len), pecs_off_)); \
			return;                                                        \
		}                                                                      \
	} while (0)

/* The errno name of err (> 0), e.g. "EINVAL". */
const char *pecs_errname(int err);
/* A return value as text: "3" or "-EINVAL". Uses a small rotating static buffer. */
const char *pecs_retname(long long ret);
/* Offset of the first differing byte, or -1. */
long pecs_memdiff(const void *a, const void *b, size_t len);
/* A short hex excerpt of both buffers around off (rotating static buffer). */
const char *pecs_hexdiff(const void *a, const void *b, size_t len, long off);

/* ---- the implementation, through the case's context ------------------------------ */

const struct pecs_impl *pecs_impl_of(struct pecs_t *t);
/* Host facts from the implementation, with the suite's defaults where it has none. */
const struct pecs_host_facts *pecs_host(struct pecs_t *t);
/* Whether the implementation claims a feature. */
int pecs_claims(struct pecs_t *t, const char *feature);

/* These call the implementation and return its value or -errno. Fds and mappings that
 * succeed are tracked and released after the case. */
int pecs_open(struct pecs_t *t, struct pecs_attr *attr, pid_t pid, int cpu, int group_fd,
	      unsigned long flags);
int pecs_close(struct pecs_t *t, int fd);
ssize_t pecs_read(struct pecs_t *t, int fd, void *buf, size_t count);
ssize_t pecs_write(struct pecs_t *t, int fd, const void *buf, size_t count); /* -ENOSYS if absent */
int pecs_ioctl(struct pecs_t *t, int fd, unsigned long request, unsigned long arg);
/* Returns 0 and sets *addr, or -errno. */
int pecs_mmap(struct pecs_t *t, int fd, size_t length, int prot, int flags, off_t offset,
	      void **addr);
int pecs_munmap(struct pecs_t *t, void *addr, size_t length);
int pecs_poll(struct pecs_t *t, int fd, short events, int timeout_ms);
int pecs_inject_sample(struct pecs_t *t, int fd, const struct pecs_sample *sample);
int pecs_set_profiler(struct pecs_t *t, int fd, const struct pecs_profiler_stream *stream);

/* Open that must succeed: evaluates to the fd, or fails the case and returns. */
#define PECS_OPEN(t, attr, pid, cpu, group_fd, flags)                                     \
	({                                                                                \
		int pecs_fd_ = pecs_open((t), (attr), (pid), (cpu), (group_fd), (flags)); \
		if (pecs_fd_ < 0) {                                                       \
			PECS_FAIL_((t), "perf_event_open failed: %s",                     \
				   pecs_retname(pecs_fd_));                               \
			return;                                                           \
		}                                                                         \
		pecs_fd_;                                                                 \
	})

/* ---- helpers ------------------------------------------------------------------- */

/* A counting software event this host lets anyone open: user-only, disabled, with
 * attr.size set to the implementation's largest. */
void pecs_attr_counting(struct pecs_t *t, struct pecs_attr *attr, uint64_t config);
/* A sampling software event: as above plus sample_period and sample_type. */
void pecs_attr_sampling(struct pecs_t *t, struct pecs_attr *attr, uint64_t config,
			uint64_t period_ns, uint64_t sample_type);

/* Spin on the CPU for about ns nanoseconds of this thread's CPU time. */
void pecs_burn_cpu(uint64_t ns);
/* A clock in nanoseconds: CLOCK_MONOTONIC for deadlines, CLOCK_THREAD_CPUTIME_ID for
 * this thread's CPU time. */
uint64_t pecs_clock_ns(clockid_t clock);
/* Current thread id and process id, as the kernel numbers them. */
pid_t pecs_gettid(void);

/* ENV_SKIP unless the implementation reports privilege (or the reverse). */
#define PECS_NEEDS_PRIVILEGE(t)                                            \
	do {                                                               \
		if (!pecs_host(t)->privileged)                             \
			PECS_ENV_SKIP((t), "needs CAP_PERFMON or root");    \
	} while (0)
#define PECS_NEEDS_NO_PRIVILEGE(t)                                              \
	do {                                                                    \
		if (pecs_host(t)->privileged)                                   \
			PECS_ENV_SKIP((t), "needs an unprivileged caller (uid 65534)"); \
	} while (0)

#endif /* PECS_CASE_H */
