/* Writing a conformance case.
 *
 * A case is a function that drives an implementation through struct pecs_t and ends
 * with a verdict; it never aborts the process. Every verdict macro (PECS_CHECK*,
 * PECS_FAIL, PECS_BROKEN, PECS_ENV_SKIP, PECS_UNSUPPORTED, PECS_OPEN) records the
 * verdict and leaves the case at once, from any depth: a helper called by the case may
 * use them too, and so returns only on success. Every fd and mapping made through
 * pecs_open()/pecs_mmap() is released by the framework after the case, whichever way it
 * ended; anything else the case sets up it hands to pecs_defer() before it can fail.
 *
 *   PECS_CASE("Required.Read.Disabled.ValuesZero", "counting", "READ-DISABLED-ZERO")
 *   {
 *           struct pecs_attr a;
 *           pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
 *           int fd = PECS_OPEN(t, &a, 0, -1, -1, 0);
 *           PECS_CHECK_ERR(t, pecs_read(t, fd, NULL, 0), ENOSPC, "read of 0 bytes");
 *           ...
 *   }
 *
 * A family of cases that differ only in parameters is one table (see PECS_CASE_TABLE).
 */
#ifndef PECS_CASE_H
#define PECS_CASE_H

#include <errno.h>
#include <stddef.h>
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
	/* A table row's case: fn is NULL, row_fn runs with the row. */
	void (*row_fn)(struct pecs_t *t, const void *row);
	const void *row;
};

/* The head every table row starts with: the row's case, as PECS_CASE would state it. */
struct pecs_row {
	const char *id;
	const char *features;
	const char *behaviours;
};

/* A table of rows, each one case (the registry expands it). */
struct pecs_case_table {
	const void *rows;
	size_t row_size, count;
	void (*row_fn)(struct pecs_t *t, const void *row);
	const char *file;
	int line;
};

#define PECS_CAT_(a, b) a##b
#define PECS_CAT(a, b) PECS_CAT_(a, b)

/* Cases register themselves in a linker section, so adding a case is adding a file
 * (the library that holds them must be linked whole: alwayslink in Bazel). The id is
 * the only name a case has; its function is named from __COUNTER__.
 *
 *   PECS_CASE("Required.Open.Flags.Cloexec", "counting", "OPEN-FLAGS-CLOEXEC") { ... }
 */
#define PECS_CASE(...) PECS_CASE_ID_(__VA_ARGS__) /* exactly id, features, behaviours */
#define PECS_CASE_ID_(id_, features_, behaviours_) \
	PECS_CASE_FN_(PECS_CAT(pecs_case_fn_, __COUNTER__), id_, features_, behaviours_)
#define PECS_CASE_FN_(fn_name, id_, features_, behaviours_)                                \
	static void fn_name(struct pecs_t *t);                                             \
	static const struct pecs_case PECS_CAT(fn_name, _def) = {                          \
		id_, features_, behaviours_, fn_name, __FILE__, __LINE__, NULL, NULL};     \
	static const struct pecs_case *const PECS_CAT(fn_name, _ptr)                       \
		__attribute__((used, section("pecs_cases"))) = &PECS_CAT(fn_name, _def);   \
	static void fn_name(struct pecs_t *t)

/* A family of cases from one table, like LTP's tcases[]. Each row is a struct whose
 * first member is a struct pecs_row (the row's id, features and behaviours) and whose
 * other members are the parameters; fn(t, row) runs one row:
 *
 *   struct period_row { struct pecs_row head; uint64_t period; int err; };
 *   static const struct period_row periods[] = {
 *           {{"Required.Ioctl.Period.Bit63Einval", "sampling", "IOC-PERIOD-EINVAL"},
 *            1ull << 63, EINVAL},
 *           ...
 *   };
 *   static void period_case(struct pecs_t *t, const struct period_row *r) { ... }
 *   PECS_CASE_TABLE(periods, period_case);
 */
#define PECS_CASE_TABLE(rows_, fn_) PECS_CASE_TABLE_AT_(rows_, fn_, __COUNTER__)
#define PECS_CASE_TABLE_AT_(rows_, fn_, n_)                                                 \
	_Static_assert(offsetof(__typeof__((rows_)[0]), head) == 0,                          \
		       "a table row starts with its struct pecs_row head");                  \
	static void PECS_CAT(pecs_table_fn_, n_)(struct pecs_t *t, const void *row)          \
	{                                                                                    \
		fn_(t, (const __typeof__((rows_)[0]) *)row);                                 \
	}                                                                                    \
	static const struct pecs_case_table PECS_CAT(pecs_table_, n_) = {                    \
		(rows_), sizeof((rows_)[0]), sizeof(rows_) / sizeof((rows_)[0]),             \
		PECS_CAT(pecs_table_fn_, n_), __FILE__, __LINE__};                           \
	static const struct pecs_case_table *const PECS_CAT(pecs_table_ptr_, n_)             \
		__attribute__((used, section("pecs_case_tables"))) = &PECS_CAT(pecs_table_, n_)

/* ---- verdicts ------------------------------------------------------------------ */

/* Record a verdict and go on; the first non-PASS verdict of a case wins. Cases rarely
 * want this: the macros below record and leave. */
void pecs_verdict(struct pecs_t *t, enum pecs_status status, const char *file, int line,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int pecs_failed(const struct pecs_t *t); /* any non-PASS verdict recorded */

/* Record a verdict and leave the case (back to the framework, which releases what the
 * case holds and runs its pecs_defer() cleanups). */
__attribute__((noreturn, format(printf, 5, 6))) void
pecs_end(struct pecs_t *t, enum pecs_status status, const char *file, int line,
	 const char *fmt, ...);
/* FAIL with an optional message: "message: detail", or the detail alone. */
__attribute__((noreturn, format(printf, 5, 6))) void
pecs_end_detail(struct pecs_t *t, const char *file, int line, const char *detail,
		const char *fmt, ...);
/* FAIL with the message, or "(cond_text) is false" when it is empty. */
__attribute__((noreturn, format(printf, 5, 6))) void
pecs_end_check(struct pecs_t *t, const char *file, int line, const char *cond_text,
	       const char *fmt, ...);
/* printf into a small rotating static buffer, for a detail. */
const char *pecs_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run fn(arg) when the case ends, however it ends: cleanups run last in, first out,
 * before the framework releases fds and mappings. They run after the case's stack is
 * gone, so arg must not point into it (a mapping, a static, or malloc'd memory). */
void pecs_defer(struct pecs_t *t, void (*fn)(void *arg), void *arg);

/* The optional message of a check: its format and arguments, or an empty one. */
#define PECS_MSG_NONE_ "%s", ""
#define PECS_MSG_NONE__
#define PECS_MSG_(...) __VA_OPT__(__VA_ARGS__) PECS_CAT_(PECS_MSG_NONE_, __VA_OPT__(_))

/* End the case, failed: the implementation did something the ABI forbids. */
#define PECS_FAIL(t, ...) pecs_end((t), PECS_FAIL, __FILE__, __LINE__, __VA_ARGS__)

/* End the case: the host cannot run it (say why: "needs root", "perf_event_paranoid=3"). */
#define PECS_ENV_SKIP(t, ...) pecs_end((t), PECS_ENV_SKIP, __FILE__, __LINE__, __VA_ARGS__)

/* End the case: its setup failed, so it says nothing about the behaviour. */
#define PECS_BROKEN(t, ...) pecs_end((t), PECS_BROKEN, __FILE__, __LINE__, __VA_ARGS__)

/* End the case: the implementation lacks an optional entry. Turns into FAIL when the
 * implementation claims every feature the case declares. */
#define PECS_UNSUPPORTED(t, ...) \
	pecs_end((t), PECS_UNSUPPORTED, __FILE__, __LINE__, __VA_ARGS__)

/* cond must hold. The message is optional: PECS_CHECK(t, n == 8) or
 * PECS_CHECK(t, n == 8, "read returned %zd", n); without one the condition is shown. */
#define PECS_CHECK(t, cond, ...)                                                        \
	do {                                                                            \
		if (!(cond))                                                            \
			pecs_end_check((t), __FILE__, __LINE__, #cond, PECS_MSG_(__VA_ARGS__)); \
	} while (0)

/* Integer equality, both values printed in decimal and hex; optional message. */
#define PECS_CHECK_EQ(t, actual, expected, ...)                                            \
	do {                                                                               \
		long long pecs_a_ = (long long)(actual), pecs_e_ = (long long)(expected);  \
		if (pecs_a_ != pecs_e_)                                                    \
			pecs_end_detail((t), __FILE__, __LINE__,                           \
					pecs_fmt("%s = %s, expected %s = %lld (0x%llx)",   \
						 #actual, pecs_value_text((t), pecs_a_),   \
						 #expected, pecs_e_,                       \
						 (unsigned long long)pecs_e_),             \
					PECS_MSG_(__VA_ARGS__));                           \
	} while (0)

/* A call (or a value) that must be exactly -err, for err such as EINVAL; both the
 * expected and the actual errno are named:
 *   PECS_CHECK_ERR(t, pecs_ioctl(t, fd, PECS_IOC_PERIOD, 0), EFAULT, "PERIOD with NULL");
 *   -> "PERIOD with NULL: pecs_ioctl(...) returned 0, expected -EFAULT" */
#define PECS_CHECK_ERR(t, call, err, ...)                                                  \
	do {                                                                               \
		long long pecs_r_ = (long long)(call);                                     \
		if (pecs_r_ != -(long long)(err))                                          \
			pecs_end_detail((t), __FILE__, __LINE__,                           \
					pecs_fmt("%s returned %s, expected -%s",          \
						 pecs_call_text((t), #call, pecs_r_),      \
						 pecs_retname(pecs_r_), pecs_errname(err)), \
					PECS_MSG_(__VA_ARGS__));                           \
	} while (0)

/* A call that must succeed (>= 0); evaluates to its value. Optional message. */
#define PECS_CHECK_OK(t, call, ...)                                                        \
	({                                                                                 \
		long long pecs_r_ = (long long)(call);                                     \
		if (pecs_r_ < 0)                                                           \
			pecs_end_detail((t), __FILE__, __LINE__,                           \
					pecs_fmt("%s failed: %s",                          \
						 pecs_call_text((t), #call, pecs_r_),      \
						 pecs_retname(pecs_r_)),                   \
					PECS_MSG_(__VA_ARGS__));                           \
		pecs_r_;                                                                   \
	})

/* Byte equality; the detail names the first differing offset. Optional message. */
#define PECS_CHECK_MEM(t, actual, expected, len, ...)                                      \
	do {                                                                               \
		long pecs_off_ = pecs_memdiff((actual), (expected), (len));                \
		if (pecs_off_ >= 0)                                                        \
			pecs_end_detail((t), __FILE__, __LINE__,                           \
					pecs_fmt("%s differs from %s at byte %ld of %zu: %s", \
						 #actual, #expected, pecs_off_, (size_t)(len), \
						 pecs_hexdiff((actual), (expected), (len),  \
							      pecs_off_)),                 \
					PECS_MSG_(__VA_ARGS__));                           \
	} while (0)

/* The text of a failed check's call: text itself, or for a value the case kept (`fd`,
 * `r`) that its last call into the implementation answered, that call's name too:
 * "perf_event_open (fd)", "helper(...) via ioctl PERF_EVENT_IOC_ID". Rotating buffer. */
const char *pecs_call_text(struct pecs_t *t, const char *text, long long ret);
/* A checked value: "3 (0x3)", or "-ENOTTY (-25)" when it is the errno the case's last call
 * into the implementation answered. Rotating buffer. */
const char *pecs_value_text(struct pecs_t *t, long long v);
/* The errno name of err (> 0), e.g. "EINVAL". */
const char *pecs_errname(int err);
/* A return value as text: "3" or "-EINVAL". Uses a small rotating static buffer. Checks
 * name the values themselves: a case needs this only for a message of its own. */
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
/* Where the implementation refuses every open to this caller by policy (perf_event_paranoid
 * 3 on Debian's kernels, unprivileged), an open it refuses with EACCES or EPERM ends the
 * case ENV_SKIP with that reason. A case that checks the refusal itself calls this first. */
void pecs_checks_policy_refusal(struct pecs_t *t);
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
/* -ENOSYS without the entry; toolkit/task.h makes the calls it reports. */
int pecs_task_event(struct pecs_t *t, const struct pecs_task_event *te);
/* fcntl(2) on an event fd (feature fasync; -ENOSYS without the entry): the signals it
 * asks for name fd in si_fd. */
int pecs_fcntl(struct pecs_t *t, int fd, int cmd, unsigned long arg);

/* Open that must succeed: evaluates to the fd, or fails the case at the caller's line,
 * naming the attr's type and config, the other arguments and the errno (the SAFE form of
 * pecs_open(); docs/implementing.md, "The case toolkit"). */
#define PECS_OPEN(t, attr, pid, cpu, group_fd, flags) \
	pecs_open_safe((t), __FILE__, __LINE__, (attr), (pid), (cpu), (group_fd), (flags))
int pecs_open_safe(struct pecs_t *t, const char *file, int line, struct pecs_attr *attr,
		   pid_t pid, int cpu, int group_fd, unsigned long flags);

/* ---- helpers ------------------------------------------------------------------- */

/* A counting software event this host lets anyone open: user-only, disabled, with
 * attr.size set to the implementation's largest. */
void pecs_attr_counting(struct pecs_t *t, struct pecs_attr *attr, uint64_t config);
/* A sampling software event: as above plus sample_period and sample_type. */
void pecs_attr_sampling(struct pecs_t *t, struct pecs_attr *attr, uint64_t config,
			uint64_t period_ns, uint64_t sample_type);

/* A clock in nanoseconds: CLOCK_MONOTONIC for deadlines, CLOCK_THREAD_CPUTIME_ID for
 * this thread's CPU time. */
uint64_t pecs_clock_ns(clockid_t clock);
/* The calling thread's id, as the kernel numbers it (gettid(2)). */
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
