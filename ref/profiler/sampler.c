#define _GNU_SOURCE
#include "pecs/profiler/sampler.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "pecs/stream/fxt_format.h"
#include "pecs/stream/fxt_writer.h"
#include "pecs/stream/markup_writer.h"
#include "pecs/stream/stream.h"
#include "capture.h"
#include "cpu_timer.h"
#include "sampler_signals.h"
#include "profiler_impl.h"
#include "spsc_buffer.h"
#include "unwind.h"

/* Room for one sample's record: 255 markup frames of up to 35 bytes, or a 255-frame FXT
 * backtrace plus two kernel object records. Lives on the target thread's stack. */
#define RECORD_MAX 10240u
#define DEFAULT_MAX_FRAMES 127u
/* A record that also carries registers and stack: the pecs.user_regs blob is one FXT
 * record, so its stack copy is what fits one beside the registers. Lives in the
 * sampler (the handler is its one producer), not on the sampled thread's stack. */
#define BLOB_MAX (REF_FXT_MAX_WORDS * REF_FXT_WORD)
#define STACK_COPY_MAX                                                                    \
	((BLOB_MAX - 8 - 16 - 16 - 8 * REF_CAPTURE_NR_REGS) & ~(size_t)7)
#define STAGE_MAX (RECORD_MAX + BLOB_MAX)
/* At most this many samples from one signal: one, the stack of its own moment. A signal
 * that stands for several periods came late (the thread ran on while its handler could
 * not run); Linux's hrtimer writes one sample for the periods it overran too
 * (perf_swevent_hrtimer() forwards past them), and the others are counted as skipped
 * (Stop's periods_skipped), never written with a stack that is no longer the thread's.
 *
 * Not under ThreadSanitizer: it runs a handler at its next interception point, not
 * when the signal arrives, so there every signal is late by design (about 25 periods
 * at 1 ms in the accuracy cases' loop, which reads the clock every ~25 ms). The tool's
 * delay would turn into missing samples, so a TSan build writes each period, dated a
 * period apart, with the one stack it has. */
#if defined(__SANITIZE_THREAD__)
#define CATCH_UP_MAX 1024u
#else
#define CATCH_UP_MAX 1u
#endif

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
	struct cpu_timer timer;
	pid_t pid, tid;
	clockid_t clock;
	int cpu;              /* -1, or the only CPU the target is sampled on */
	bool sigtrap;         /* each overflow also raises SIGTRAP on the target thread */
	uint64_t sig_data;
	uint32_t sig_type;
	unsigned rate;        /* the clock's speed limit against wall time (cpu_timer) */
	unsigned max_frames;
	enum pecs_stream_format output;
	bool user_regs;       /* each FXT sample carries registers and user_stack bytes */
	uint32_t user_stack;

	uint64_t period;      /* ns of CPU time between samples */
	uint64_t generation;  /* this run's, in every signal's value (signal_value()) */
	int slot;             /* this run's index in running[] */
	bool timer_live;      /* started, not stopped yet */
	bool default_signo;   /* opts.signo is chosen at each start */
	bool signal_held;     /* ref_sampler_signal_take() done, not released yet */

	/* Written by the handler only (the single producer); dropped is also read by the
	 * collector while running, the rest by stop after the handlers are done. */
	uint64_t taken, repeated, skipped, most_periods;
	_Atomic uint64_t dropped;
	uint64_t signals, time_sum, time_min, time_max; /* time spent per signal */
	uint64_t last_time;   /* the latest sample's time */
	uint64_t ips[REF_STREAM_MAX_FRAMES]; /* the handler's scratch: off its frame, which
					      * already holds a record */
	bool announced;
	/* The handler's scratch for a sample with registers (user_regs). */
	uint32_t regs_abi;
	uint64_t regs[REF_CAPTURE_NR_REGS];
	size_t stack_len;
	uint8_t stack_copy[STACK_COPY_MAX];
	uint8_t big[STAGE_MAX];

	uint64_t read_end;    /* mark_end's: UINT64_MAX, or where the reads stop once */
	/* The consumer's current entry, for reads smaller than an entry. */
	struct spsc_entry stage_entry;
	size_t stage_len, stage_pos;
	uint8_t stage[STAGE_MAX];
};

/* The process-wide part, which a signal handler cannot do without: a handler is the
 * process's, and a signal carries no pointer it could trust (one queued for a run that
 * has since stopped arrives after its sampler is freed). So the samplers running now
 * are listed here, and a signal is served from the list. A sampler is published
 * (seq_cst) only once it and its timer are fully set up; the handler's load then sees
 * them whole. */
#define MAX_RUNNING 64
static _Atomic(struct sampler *) running[MAX_RUNNING];
/* Handlers between their first and last touch of a listed sampler. seq_cst on both
 * sides: stop's clear-then-wait and the handler's count-then-load must not pass each
 * other. */
static atomic_int inflight;
/* Runs started so far: each signal carries its run's number, so a signal queued for an
 * earlier run (still pending when it stopped) is told apart from the current run's
 * and from the same signal someone else queued. */
static _Atomic uint64_t generations;

/* A signal's value: the run's generation, kept in the pointer member, which the kernel
 * passes through untouched. */
static void *signal_value(uint64_t generation)
{
	return (void *)(uintptr_t)generation;
}

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

static size_t write_record(struct sampler *s, uint8_t *rec, size_t cap, uint64_t t,
			   const uint64_t *ips, unsigned n)
{
	struct ref_fxt_who who = { 0, (uint64_t)s->pid, (uint64_t)s->tid };
	struct ref_fxt_str no_name = { NULL, 0, 0 };
	size_t len = 0;
	ssize_t w;

	if (s->output == PECS_STREAM_MARKUP) {
		/* Markup has no element for registers: its samples carry none. */
		w = ref_markup_write_sample((char *)rec, cap, s->pid, s->tid, ips, n);
		return w < 0 ? 0 : (size_t)w;
	}
	if (!s->announced) {
		/* Fuchsia's profiler names each new process and thread before its first
		 * backtrace. Markup has no such record. */
		w = ref_fxt_write_kernel_object(rec, cap, ZX_OBJ_TYPE_PROCESS, s->pid, &no_name);
		len += w > 0 ? (size_t)w : 0;
		w = ref_fxt_write_kernel_object(rec + len, cap - len, ZX_OBJ_TYPE_THREAD, s->tid,
						&no_name);
		len += w > 0 ? (size_t)w : 0;
	}
	/* Right before the backtrace it belongs to (fxt_format.h). */
	if (s->user_regs) {
		w = ref_fxt_write_user_regs(rec + len, cap - len, s->regs_abi, s->regs,
					    s->regs_abi ? REF_CAPTURE_NR_REGS : 0, s->stack_copy,
					    s->regs_abi ? s->stack_len : 0);
		len += w > 0 ? (size_t)w : 0;
	}
	w = ref_fxt_write_backtrace(rec + len, cap - len, &who, t, ips, n);
	return w < 0 ? 0 : len + (size_t)w;
}

/* The interrupted registers, and the stack above their SP as far as the event asks
 * and one blob holds (a request past STACK_COPY_MAX gets a shorter dyn_size). */
static void capture(struct sampler *s, ucontext_t *uc)
{
	size_t n = s->user_stack < STACK_COPY_MAX ? s->user_stack : STACK_COPY_MAX;

	s->regs_abi = ref_capture_regs(uc, s->regs);
	s->stack_len = s->regs_abi ? ref_capture_stack(s->regs[REF_CAPTURE_REG_SP],
						       s->stack_copy, n) : 0;
}

/* One signal: the periods the CPU-time clock passed since the last one, usually one.
 * The sample is the stack of this moment; the periods beyond CATCH_UP_MAX are skipped.
 * A TSan build writes up to CATCH_UP_MAX of them, dated back a period apart from the
 * moment the latest ended, as if the thread had run without a break since. */
static void take_samples(struct sampler *s, ucontext_t *uc)
{
	uint8_t small[RECORD_MAX];
	uint8_t *rec = s->user_regs ? s->big : small;
	size_t cap = s->user_regs ? sizeof(s->big) : sizeof(small);
	uint64_t t0 = now_ns(), dt, late;
	uint64_t n = ref_cpu_timer_take(&s->timer, t0, &late);
	struct spsc_entry e = { 0, 0, 0 };
	unsigned batch, nr_ips;
	int cpu;
	uint64_t taken = 0, dropped = 0, repeated = 0;

	cpu = sched_getcpu();
	/* A signal of another sampler on this thread, a preempted target, or a target on
	 * a CPU its event is not bound to: there the event does not run, so the periods
	 * that passed are none of its own (not samples, not skipped). */
	if (!n || (s->cpu >= 0 && cpu != s->cpu)) {
		ref_cpu_timer_rearm(&s->timer, now_ns());
		return;
	}
	if (n > s->most_periods)
		s->most_periods = n;
	batch = n > CATCH_UP_MAX ? CATCH_UP_MAX : (unsigned)n;
	s->skipped += n - batch;
	if (batch == 1)
		late = 0; /* one sample: dated when its stack was taken */
	nr_ips = ref_unwind_signal_frame(uc, s->ips, s->max_frames);
	if (s->user_regs)
		capture(s, uc);
	if (s->sigtrap)
		ref_sampler_send_sigtrap(s->pid, s->tid, s->sig_data, s->sig_type);

	e.cpu = cpu < 0 ? 0 : (uint32_t)cpu;
	for (unsigned i = 0; i < batch; i++) {
		uint64_t back = late + (uint64_t)(batch - 1 - i) * s->period;
		uint64_t t = back < t0 ? t0 - back : 0;

		/* Times stay strictly increasing and after start, as an hrtimer's would. */
		if (t <= s->last_time)
			t = s->last_time + 1;
		s->last_time = t;
		e.time = t;
		e.len = write_record(s, rec, cap, t, s->ips, nr_ips);
		if (e.len && ref_spsc_push(&s->buf, &e, rec) == 0) {
			s->announced = true;
			taken++;
			/* Only the batch's last period ended when its stack was taken. */
			repeated += i + 1 < batch;
		} else {
			dropped++;
		}
	}
	s->taken += taken;
	s->repeated += repeated;
	if (dropped)
		atomic_fetch_add_explicit(&s->dropped, dropped, memory_order_relaxed);
	dt = now_ns();
	ref_cpu_timer_rearm(&s->timer, dt);
	dt -= t0;
	s->time_sum += dt;
	s->signals++;
	if (s->signals == 1 || dt < s->time_min)
		s->time_min = dt;
	if (dt > s->time_max)
		s->time_max = dt;
}

/* One of our timers' signals arrived on a thread: every sampler running on that thread
 * takes the periods it is due, not only the one whose timer fired. A signal of an
 * earlier run, still pending when it stopped, or of another sampler on the same thread,
 * arrives at a moment of its own and stands for them all: ignoring it would leave a
 * sampler whose own signal was merged into it (a signal does not queue twice) with no
 * timer armed. A sampler with nothing due takes nothing and arms its timer again. */
static void on_signal(int signo, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	uint64_t gen = (uintptr_t)si->si_value.sival_ptr;
	pid_t tid;

	(void)signo;
	atomic_fetch_add_explicit(&inflight, 1, memory_order_seq_cst);
	/* A timer's signal (SI_TIMER) can only come from a timer of this process. One with
	 * generation 0, or one not handed out yet, is someone else's. */
	if (si->si_code == SI_TIMER && gen &&
	    gen <= atomic_load_explicit(&generations, memory_order_relaxed)) {
		tid = (pid_t)syscall(SYS_gettid);
		for (int i = 0; i < MAX_RUNNING; i++) {
			struct sampler *s = atomic_load_explicit(&running[i], memory_order_seq_cst);

			if (s && tid == s->tid)
				take_samples(s, ucv);
		}
	}
	atomic_fetch_sub_explicit(&inflight, 1, memory_order_seq_cst);
	errno = saved_errno;
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
	s->user_regs = p->sampling.user_regs != 0;
	s->user_stack = p->sampling.user_stack;
	s->cpu = t->cpu_bound ? t->cpu : -1;
	s->sigtrap = t->sigtrap;
	s->sig_data = t->sig_data;
	s->sig_type = t->sig_type;
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
	return ref_spsc_push(&s->buf, &e, rec);
}

static void sampler_stop(struct ref_profiler *p, struct ref_profiler_result *res);

/* Once no timer of this run can signal any more. */
static void release_signal(struct sampler *s)
{
	if (s->signal_held)
		ref_sampler_signal_release(s->opts.signo);
	s->signal_held = false;
}

/* Lists s in running[]: its slot, or -1 when MAX_RUNNING samplers already run. */
static int publish(struct sampler *s)
{
	for (int i = 0; i < MAX_RUNNING; i++) {
		struct sampler *none = NULL;

		if (atomic_compare_exchange_strong_explicit(&running[i], &none, s,
							    memory_order_seq_cst,
							    memory_order_seq_cst))
			return i;
	}
	return -1;
}

/* Takes s off the list, then waits out any handler that saw it there. A signal still
 * queued arrives later and no longer finds it. */
static void withdraw(struct sampler *s)
{
	struct sampler *me = s;

	if (s->slot < 0)
		return; /* not running */
	atomic_compare_exchange_strong_explicit(&running[s->slot], &me, NULL,
						memory_order_seq_cst, memory_order_seq_cst);
	s->slot = -1;
	while (atomic_load_explicit(&inflight, memory_order_seq_cst))
		sched_yield();
}

static int sampler_start(struct ref_profiler *p, size_t buffer_bytes)
{
	struct sampler *s = p->impl;
	int ret;

	s->taken = s->repeated = s->skipped = s->most_periods = 0;
	atomic_store_explicit(&s->dropped, 0, memory_order_relaxed);
	s->time_sum = s->time_min = s->time_max = 0;
	s->signals = 0;
	s->period = p->sampling.period;
	s->last_time = now_ns();
	s->announced = false;
	s->stage_len = s->stage_pos = 0;
	s->read_end = UINT64_MAX;
	if (!s->have_buf) {
		ret = ref_spsc_init(&s->buf,
				    s->opts.buffer_bytes ? s->opts.buffer_bytes : buffer_bytes);
		if (ret)
			return ret;
		s->have_buf = true;
	}
	ref_spsc_clear(&s->buf);
	ret = push_header(s);
	if (ret)
		return ret;
	ref_unwind_warm_up();
	if (s->default_signo)
		s->opts.signo = ref_sampler_default_signo();
	ret = ref_sampler_signal_take(s->opts.signo, on_signal);
	if (ret)
		return ret;
	s->signal_held = true;
	s->generation = atomic_fetch_add_explicit(&generations, 1, memory_order_relaxed) + 1;
	/* Everything the handler reads is set before publish() lists it: a signal of an
	 * earlier run that lands after the publication finds a whole timer, never one
	 * being cleared. */
	ret = ref_cpu_timer_init(&s->timer, s->clock, s->rate, s->period, s->tid, s->opts.signo,
				 signal_value(s->generation));
	if (ret) {
		ref_cpu_timer_destroy(&s->timer);
		release_signal(s);
		return ret;
	}
	s->slot = publish(s);
	if (s->slot < 0) {
		ref_cpu_timer_destroy(&s->timer);
		release_signal(s);
		return REF_PROFILER_BAD_STATE;
	}
	/* Only now may signals come: one the handler ignored would leave no timer armed. */
	ret = ref_cpu_timer_run(&s->timer);
	if (ret) {
		withdraw(s);
		ref_cpu_timer_destroy(&s->timer);
		release_signal(s);
		return ret;
	}
	s->timer_live = true;
	return 0;
}

static void sampler_stop(struct ref_profiler *p, struct ref_profiler_result *res)
{
	struct sampler *s = p->impl;

	if (s->timer_live)
		ref_cpu_timer_stop(&s->timer);
	withdraw(s);
	if (s->timer_live) {
		/* No handler is inside take() once withdrawn: the timers can go. */
		ref_cpu_timer_destroy(&s->timer);
		/* The periods up to now are the run's; those no signal took are skipped,
		 * as a disable on Linux writes no sample for them either. */
		s->skipped += ref_cpu_timer_owed(&s->timer);
		s->timer_live = false;
	}
	release_signal(s);
	if (!res)
		return;
	res->samples_collected = s->taken;
	res->dropped_buffer_full = atomic_load_explicit(&s->dropped, memory_order_relaxed);
	res->samples_repeated = s->repeated;
	res->periods_skipped = s->skipped;
	res->most_periods_per_signal = s->most_periods;
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
		if (s->read_end != UINT64_MAX && ref_spsc_passed(&s->buf, s->read_end)) {
			s->read_end = UINT64_MAX;
			return 0;
		}
		if (!ref_spsc_pop(&s->buf, &s->stage_entry, s->stage, sizeof(s->stage)))
			return 0;
		/* Entries are built in a STAGE_MAX buffer at most, so they always fit. */
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

static void sampler_mark_end(struct ref_profiler *p)
{
	struct sampler *s = p->impl;

	s->read_end = ref_spsc_mark(&s->buf);
}

static void sampler_reset(struct ref_profiler *p)
{
	struct sampler *s = p->impl;

	s->read_end = UINT64_MAX;
	if (s->have_buf)
		ref_spsc_clear(&s->buf);
	s->stage_len = s->stage_pos = 0;
}

static void sampler_destroy(struct ref_profiler *p)
{
	struct sampler *s = p->impl;

	release_signal(s);
	if (s->have_buf)
		ref_spsc_destroy(&s->buf);
	free(s);
}

static const struct ref_profiler_ops sampler_ops = {
	.live = true,
	.configure = sampler_configure,
	.start = sampler_start,
	.stop = sampler_stop,
	.read = sampler_read,
	.mark_end = sampler_mark_end,
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
	s->slot = -1;
	s->read_end = UINT64_MAX;
	if (opts)
		s->opts = *opts;
	s->default_signo = s->opts.signo == 0;
	if (s->default_signo)
		s->opts.signo = ref_sampler_default_signo();
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
	return atomic_load_explicit(&((struct sampler *)p->impl)->dropped, memory_order_relaxed);
}
