#define _GNU_SOURCE
#include "pecs/profiler/sampler.h"

#include <errno.h>
#include <stdint.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "pecs/stream/fxt_writer.h"
#include "pecs/stream/markup_writer.h"
#include "pecs/stream/stream.h"
#include "cpu_ticker.h"
#include "profiler_impl.h"
#include "spsc_buffer.h"

/* Room for one sample's record: 255 markup frames of up to 35 bytes, or a 255-frame FXT
 * backtrace plus two kernel object records. Lives on the target thread's stack. */
#define RECORD_MAX 10240u
#define DEFAULT_MAX_FRAMES 127u
/* At most this many samples from one signal; the rest count as dropped. */
#define BATCH_MAX 1024u

/* Zircon object types the FXT kernel object records name. */
#define ZX_OBJ_TYPE_PROCESS 1u
#define ZX_OBJ_TYPE_THREAD 2u

/* Linux's CPU-time clock ids (include/linux/posix-timers.h): ~id << 3 | clock, with
 * bit 2 for a thread rather than a whole process. */
#define CPUCLOCK_SCHED 2
#define CPUCLOCK_PERTHREAD 4

struct sampler {
	struct ref_sampler_opts opts;
	struct spsc_buffer buf;
	bool have_buf;
	struct cpu_ticker ticker;
	pid_t pid, tid;
	clockid_t clock;
	unsigned rate;        /* the clock's speed limit against wall time (cpu_ticker) */
	unsigned max_frames;
	enum pecs_stream_format output;

	uint64_t period;      /* ns of CPU time between samples */

	/* Written by the handler only (the single producer). */
	uint64_t taken, dropped, repeated;
	uint64_t signals, time_sum, time_min, time_max; /* time spent per signal */
	uint64_t last_time;   /* the latest sample's time */
	uint64_t ips[REF_STREAM_MAX_FRAMES]; /* the latest real signal's stack */
	unsigned nr_ips;
	bool announced;

	/* The consumer's current entry, for reads smaller than an entry. */
	struct spsc_entry stage_entry;
	size_t stage_len, stage_pos;
	uint8_t stage[RECORD_MAX];
};

/* The sampler signals are routed to; the handler is process-wide. */
static struct sampler *active;
/* Handlers between their first and last touch of `active`'s sampler. */
static int inflight;

static clockid_t cpu_clock(pid_t id, bool thread)
{
	return (clockid_t)((~(unsigned)id) << 3) | CPUCLOCK_SCHED | (thread ? CPUCLOCK_PERTHREAD : 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static unsigned unwind(ucontext_t *uc, uint64_t *ips, unsigned max)
{
	unw_cursor_t c;
	unsigned n = 0;

	/* On x86-64 libunwind's context is the ucontext: start from the interrupted frame,
	 * flagged as a signal frame so its IP is taken as is (not as a return address). */
	if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
		do {
			unw_word_t ip;

			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			ips[n++] = ip;
		} while (n < max && unw_step(&c) > 0);
	}
	if (n == 0) {
		ips[0] = uc->uc_mcontext.gregs[REG_RIP];
		n = 1;
	}
	return n;
}

static size_t write_record(struct sampler *s, uint8_t *rec, uint64_t t, const uint64_t *ips,
			   unsigned n)
{
	struct ref_fxt_who who = { 0, (uint64_t)s->pid, (uint64_t)s->tid };
	struct ref_fxt_str no_name = { NULL, 0, 0 };
	size_t len = 0;
	ssize_t w;

	if (s->output == PECS_STREAM_MARKUP) {
		w = ref_markup_write_sample((char *)rec, RECORD_MAX, s->pid, s->tid, ips, n);
		return w < 0 ? 0 : (size_t)w;
	}
	if (!s->announced) {
		/* Fuchsia's profiler names each new process and thread before its first
		 * backtrace. Markup has no such record. */
		w = ref_fxt_write_kernel_object(rec, RECORD_MAX, ZX_OBJ_TYPE_PROCESS, s->pid,
						&no_name);
		len += w > 0 ? (size_t)w : 0;
		w = ref_fxt_write_kernel_object(rec + len, RECORD_MAX - len, ZX_OBJ_TYPE_THREAD,
						s->tid, &no_name);
		len += w > 0 ? (size_t)w : 0;
	}
	w = ref_fxt_write_backtrace(rec + len, RECORD_MAX - len, &who, t, ips, n);
	return w < 0 ? 0 : len + (size_t)w;
}

/* The samples one signal stands for: every period the CPU-time clock passed since the
 * last signal (usually one; more when the signal came late, on a busy machine). Linux's
 * hrtimer takes each at the moment its period ends, with the stack of that moment; the
 * sampler repeats the stack it has and dates each sample back to when its period
 * ended, as if the thread had run without a break since (its approximation; exact for
 * the latest period of a thread that was running). */
static unsigned batch_size(struct sampler *s, uint64_t *excess, uint64_t *late)
{
	uint64_t n = cpu_ticker_take(&s->ticker, late);

	*excess = n > BATCH_MAX ? n - BATCH_MAX : 0;
	return n > BATCH_MAX ? BATCH_MAX : (unsigned)n;
}

/* kicked: the signal came from a flush or stop on the target thread rather than from
 * the ticker. Its context is the engine's own code, so the stack of the latest real
 * signal stands in for the periods the ticker had not got to yet. */
static void take_samples(struct sampler *s, ucontext_t *uc, bool kicked)
{
	uint8_t rec[RECORD_MAX];
	uint64_t t0 = now_ns(), dt, excess, late;
	unsigned batch = batch_size(s, &excess, &late);
	struct spsc_entry e = { 0, 0, 0 };
	int cpu;
	uint64_t taken = 0, dropped = excess, repeated = 0;
	bool reused = kicked && s->nr_ips;

	if (!batch && !excess)
		return; /* a late signal whose periods an earlier one took */
	if (!reused)
		s->nr_ips = unwind(uc, s->ips, s->max_frames);
	cpu = sched_getcpu();

	e.cpu = cpu < 0 ? 0 : (uint32_t)cpu;
	for (unsigned i = 0; i < batch; i++) {
		uint64_t back = late + (uint64_t)(batch - 1 - i) * s->period;
		uint64_t t = back < t0 ? t0 - back : 0;

		/* Times stay strictly increasing and after start, as an hrtimer's would. */
		if (t <= s->last_time)
			t = s->last_time + 1;
		s->last_time = t;
		e.time = t;
		e.len = write_record(s, rec, t, s->ips, s->nr_ips);
		if (e.len && spsc_push(&s->buf, &e, rec) == 0) {
			s->announced = true;
			taken++;
			/* Only the batch's last period ended when its stack was taken. */
			repeated += reused || i + 1 < batch;
		} else {
			dropped++;
		}
	}
	__atomic_store_n(&s->taken, s->taken + taken, __ATOMIC_RELAXED);
	__atomic_store_n(&s->repeated, s->repeated + repeated, __ATOMIC_RELAXED);
	__atomic_store_n(&s->dropped, s->dropped + dropped, __ATOMIC_RELAXED);
	dt = now_ns() - t0;
	s->time_sum += dt;
	s->signals++;
	if (s->signals == 1 || dt < s->time_min)
		s->time_min = dt;
	if (dt > s->time_max)
		s->time_max = dt;
}

static void on_signal(int signo, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	struct sampler *s;

	(void)signo;
	__atomic_add_fetch(&inflight, 1, __ATOMIC_SEQ_CST);
	s = __atomic_load_n(&active, __ATOMIC_SEQ_CST);
	if (s && si->si_code == SI_QUEUE && si->si_value.sival_ptr == s)
		take_samples(s, ucv, false);
	else if (s && si->si_code == SI_QUEUE && si->si_value.sival_ptr == &s->ticker)
		take_samples(s, ucv, true);
	__atomic_sub_fetch(&inflight, 1, __ATOMIC_SEQ_CST);
	errno = saved_errno;
}

static int install_handler(int signo)
{
	static int installed[NSIG];
	struct sigaction sa;

	if (__atomic_load_n(&installed[signo], __ATOMIC_ACQUIRE))
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* Left installed after stop: a signal already queued when the ticker
	 * stops would otherwise meet SIGPROF's default action and end the process. */
	if (sigaction(signo, &sa, NULL) < 0)
		return -errno;
	__atomic_store_n(&installed[signo], 1, __ATOMIC_RELEASE);
	return 0;
}

/* First use of libunwind outside any handler: its one-time setup allocates. */
static void warm_unwinder(void)
{
	static int done;
	unw_context_t uc;
	unw_cursor_t c;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	if (unw_getcontext(&uc) == 0 && unw_init_local(&c, &uc) == 0)
		while (unw_step(&c) > 0)
			;
}

static unsigned online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

static bool thread_of_this_process(pid_t tid)
{
	return syscall(SYS_tgkill, getpid(), tid, 0) == 0;
}

static int sampler_configure(struct ref_profiler *p)
{
	struct sampler *s = p->impl;
	const struct ref_profiler_target *t = &p->target;
	pid_t self = getpid();

	if (p->sampling.timebase != REF_PROFILER_NANOSECONDS)
		return REF_PROFILER_INVALID_CONFIGURATION;
	switch (t->kind) {
	case REF_PROFILER_TASK_THREAD:
		s->pid = self;
		s->tid = (pid_t)t->koid;
		s->clock = cpu_clock(s->tid, true);
		s->rate = 1;
		break;
	case REF_PROFILER_TASK_PROCESS:
		if (t->koid != (uint64_t)self)
			return REF_PROFILER_INVALID_CONFIGURATION;
		s->pid = self;
		s->tid = t->thread ? (pid_t)t->thread : self;
		s->clock = cpu_clock(self, false);
		s->rate = online_cpus();
		break;
	default:
		return REF_PROFILER_INVALID_CONFIGURATION;
	}
	if (t->koid > INT32_MAX || t->thread > INT32_MAX || s->tid <= 0 ||
	    !thread_of_this_process(s->tid))
		return REF_PROFILER_INVALID_CONFIGURATION;
	s->max_frames = p->sampling.callgraph == REF_PROFILER_CALLGRAPH_NONE ? 1 : s->opts.max_frames;
	s->output = p->output;
	return 0;
}

static int push_header(struct sampler *s)
{
	uint8_t rec[32];
	struct spsc_entry e = { 0, 0, now_ns() };
	ssize_t n;

	if (s->output == PECS_STREAM_MARKUP) {
		n = ref_markup_write_reset((char *)rec, sizeof(rec));
	} else {
		n = ref_fxt_write_magic(rec, sizeof(rec));
		if (n > 0)
			n += ref_fxt_write_init(rec + n, sizeof(rec) - n, 1000000000u);
	}
	if (n <= 0)
		return -EINVAL;
	e.len = (uint32_t)n;
	return spsc_push(&s->buf, &e, rec);
}

static void sampler_stop(struct ref_profiler *p, struct ref_profiler_result *res);

static int sampler_start(struct ref_profiler *p, size_t buffer_bytes)
{
	struct sampler *s = p->impl;
	struct sampler *none = NULL;
	int ret;

	s->taken = s->dropped = s->repeated = s->time_sum = s->time_min = s->time_max = 0;
	s->signals = 0;
	s->nr_ips = 0;
	s->period = p->sampling.period;
	s->last_time = now_ns();
	s->announced = false;
	s->stage_len = s->stage_pos = 0;
	if (!s->have_buf) {
		ret = spsc_init(&s->buf, s->opts.buffer_bytes ? s->opts.buffer_bytes : buffer_bytes);
		if (ret)
			return ret;
		s->have_buf = true;
	}
	spsc_clear(&s->buf);
	ret = push_header(s);
	if (ret)
		return ret;
	warm_unwinder();
	ret = install_handler(s->opts.signo);
	if (ret)
		return ret;
	if (!__atomic_compare_exchange_n(&active, &none, s, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST))
		return REF_PROFILER_BAD_STATE;

	ret = cpu_ticker_start(&s->ticker, s->clock, s->rate, s->period, s->tid, s->opts.signo, s);
	if (ret) {
		__atomic_store_n(&active, NULL, __ATOMIC_SEQ_CST);
		return ret;
	}
	return 0;
}

static void sampler_stop(struct ref_profiler *p, struct ref_profiler_result *res)
{
	struct sampler *s = p->impl;
	struct sampler *me = s;

	/* The periods up to now are the run's, whether or not the ticker saw them. */
	cpu_ticker_kick(&s->ticker, &s->ticker);
	cpu_ticker_stop(&s->ticker);
	__atomic_compare_exchange_n(&active, &me, NULL, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	/* A handler that saw `active` before it was cleared finishes before we go on. */
	while (__atomic_load_n(&inflight, __ATOMIC_SEQ_CST))
		sched_yield();
	if (!res)
		return;
	res->samples_collected = s->taken;
	res->dropped_buffer_full = s->dropped;
	res->samples_repeated = s->repeated;
	if (s->signals) {
		res->mean_sample_time_us = s->time_sum / s->signals / 1000;
		res->min_sample_time_us = s->time_min / 1000;
		res->max_sample_time_us = s->time_max / 1000;
	}
}

static ssize_t sampler_read(struct ref_profiler *p, void *buf, size_t len, uint32_t *cpu,
			    uint64_t *time)
{
	struct sampler *s = p->impl;
	size_t n;

	if (s->stage_pos == s->stage_len) {
		s->stage_pos = s->stage_len = 0;
		if (!spsc_pop(&s->buf, &s->stage_entry, s->stage, sizeof(s->stage)))
			return 0;
		/* Entries are built in a RECORD_MAX buffer, so they always fit. */
		s->stage_len = s->stage_entry.len < sizeof(s->stage) ? s->stage_entry.len
								     : sizeof(s->stage);
		if (s->stage_len == 0)
			return 0;
	}
	n = s->stage_len - s->stage_pos < len ? s->stage_len - s->stage_pos : len;
	memcpy(buf, s->stage + s->stage_pos, n);
	s->stage_pos += n;
	*cpu = s->stage_entry.cpu;
	*time = s->stage_entry.time;
	return n;
}

static void sampler_catch_up(struct ref_profiler *p)
{
	struct sampler *s = p->impl;

	cpu_ticker_kick(&s->ticker, &s->ticker);
}

static void sampler_reset(struct ref_profiler *p)
{
	struct sampler *s = p->impl;

	if (s->have_buf)
		spsc_clear(&s->buf);
	s->stage_len = s->stage_pos = 0;
}

static void sampler_destroy(struct ref_profiler *p)
{
	struct sampler *s = p->impl;

	if (s->have_buf)
		spsc_destroy(&s->buf);
	free(s);
}

static const struct ref_profiler_ops sampler_ops = {
	.live = true,
	.configure = sampler_configure,
	.start = sampler_start,
	.stop = sampler_stop,
	.read = sampler_read,
	.catch_up = sampler_catch_up,
	.reset = sampler_reset,
	.destroy = sampler_destroy,
};

int ref_profiler_new_sampler(struct ref_profiler **out, const struct ref_sampler_opts *opts)
{
	struct sampler *s;
	struct ref_profiler *p;

	if (!out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts.size = sizeof(s->opts);
	if (opts) {
		size_t n = opts->size < sizeof(s->opts) ? opts->size : sizeof(s->opts);

		memcpy(&s->opts, opts, n);
		s->opts.size = sizeof(s->opts);
	}
	if (s->opts.signo == 0)
		s->opts.signo = SIGPROF;
	if (s->opts.max_frames == 0)
		s->opts.max_frames = DEFAULT_MAX_FRAMES;
	if (s->opts.signo < 1 || s->opts.signo >= NSIG || s->opts.max_frames > REF_STREAM_MAX_FRAMES) {
		free(s);
		return -EINVAL;
	}
	p = ref_profiler_alloc(&sampler_ops, s);
	if (!p) {
		free(s);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

uint64_t ref_sampler_dropped(const struct ref_profiler *p)
{
	if (p->ops != &sampler_ops)
		return 0;
	return __atomic_load_n(&((struct sampler *)p->impl)->dropped, __ATOMIC_RELAXED);
}
