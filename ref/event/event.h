/* The events an engine holds: their groups, their ring buffers and mappings. The engine
 * is above this layer: what events need of it comes down in struct ref_event_env.
 * Every function here expects the engine lock held unless it says otherwise. */
#ifndef REF_EVENT_H
#define REF_EVENT_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "pecs/ref.h"
#include "pecs/task_event.h"
#include "ref/attr/attr.h"
#include "ref/event/profiler_seam.h"
#include "ref/host/host.h"
#include "ref/record/record.h"
#include "ref/record/sample_layout.h"

struct ref_ring;
struct ref_event;

/* Where a counter's value comes from. */
struct ref_source {
	int kind;       /* REF_SRC_* in event_source.c */
	clockid_t clock;
	pid_t tid;      /* as /proc names it, for the /proc sources */
	pid_t ns_tid;   /* as this process's pid namespace names it, for waitid() */
	uint64_t last;  /* last good reading: a finished thread's value stays frozen */
	int children;   /* inherit on another process: add its waited-for children's */
	uint64_t child_base; /* their counts at the open, which are not the event's */
	uint64_t child_seen; /* what they added at the last reading: it never steps back */
	/* With inherit on another process's main thread: the threads it had made before the
	 * open, each with its last runtime read. The event does not follow them, so their
	 * time comes off the process clock. */
	struct ref_source_thread {
		pid_t tid;
		uint64_t ns;
	} *before;
	size_t nr_before;
};

/* A ring buffer, shared by every mapping of it and every event redirected into it. */
struct ref_rb {
	struct ref_ring *ring;
	struct ref_event *owner;   /* the event whose mmap created it */
	unsigned mmap_count;
	size_t nr_pages;           /* 1 + data pages */
	long user_extra, extra;    /* mlock pages charged, as perf_mmap() splits them */
	int writable, backward;    /* as created: a read-only mapping overwrites */
	struct ref_event **events; /* attached events (owner and redirected ones) */
	size_t nr_events, cap_events;
	int woke;                  /* a write reached a wakeup point (event_fasync.c) */
};

struct ref_mapping {
	void *addr;
	size_t len;
	struct ref_event *ev;
	struct ref_rb *rb;
	struct ref_mapping *next;
};

struct ref_event_env;

/* What an event on another process waits for its task's exec to do (event_exec.c). */
struct ref_exec_mark {
	int armed;      /* enable_on_exec: off until the task executes */
	int remove;     /* remove_on_exec: counts until the task executes */
	int removed;    /* its task executed: the event is over, ENABLE does nothing */
	int traced;     /* the task's tracer tells the exec at its moment */
	int has_exe;
	dev_t dev;      /* /proc/<pid>/exe at open */
	ino_t ino;
	char comm[64];  /* and the comm, for a task that died before we looked */
};

struct ref_tracer;

/* fcntl(2)'s asynchronous notification state (event_fasync.c), the file's in Linux. */
struct ref_fasync {
	unsigned int flags;   /* F_SETFL's flags; O_ASYNC: on the fasync list */
	int fd;               /* the number O_ASYNC was set through: si_fd */
	int signum;           /* F_SETSIG; 0: plain SIGIO */
	int owner_type;       /* F_OWNER_TID (also the zeroed state), _PID or _PGRP */
	pid_t owner;          /* 0: none */
};

struct ref_event {
	struct ref_event_env *env; /* the owner's, shared by all its events */
	unsigned refs;            /* the fd and each mapping (a mapping keeps the file open) */
	int fd;                   /* -1 once closed */
	struct pecs_attr attr;
	enum ref_kind kind;
	uint64_t id;
	pid_t pid, tid;           /* pid -1: cpu-wide */
	pid_t owner_tid;          /* the thread that opened it: its prctl switches it */
	int same_process;
	int cpu;
	int clock;                /* attr.clockid with use_clockid, else -1 */

	struct ref_event *leader; /* itself for a leader */
	struct ref_event **siblings;
	uint32_t nr_siblings, cap_siblings;
	/* A leader's siblings by read_format (attr validation keeps it below MAX), so a
	 * new member's 16 KiB read check looks at each format once, not at each member. */
	uint32_t sibling_formats[PECS_FORMAT_MAX];

	int on;                   /* enabled */
	int running;              /* enabled and its leader enabled */
	int draining;             /* sampler stop in progress: deliveries still taken */
	uint64_t count, time_enabled, time_running;
	uint64_t t_last, c_last;  /* source readings at the last sync */
	struct ref_source tsrc, csrc;
	uint64_t lost;            /* samples this event could not write (read()'s LOST) */

	uint64_t period;          /* sampling period, or frequency when attr has FREQ */
	/* PERF_SAMPLE_PERIOD of a sample that brings none, as hw.last_period: the clock
	 * events set it once at open (IOC_PERIOD moves only their timer), the others
	 * take each new period. */
	uint64_t last_period;
	int64_t event_limit;      /* REFRESH: overflows left before disabling; 0 = none */

	struct ref_rb *rb;
	unsigned mmap_count;
	struct ref_ring *batch_ring; /* held from deliver_begin to _end (event_deliver.c) */
	int batch_wrote;          /* a sample reached the ring in this batch: wake at _end */
	int batch_laid_out;       /* batch_layout holds for this batch (event_batch.c) */
	struct ref_record_layout batch_layout;
	uint8_t *batch_at;        /* the ring's window: written up to batch_used */
	size_t batch_room, batch_used;

	/* Task facts for CGROUP and CODE_PAGE_SIZE: the id /proc knows the task by, found
	 * at open (-1 none; 0 for a cpu-wide event), and its cgroup, looked up at enable
	 * when sampled (event_sample.c). */
	pid_t proc_id;
	uint64_t cgroup;

	/* A syscalls:* tracepoint (kind REF_KIND_SYSCALL_TP): which call, and the hits
	 * left before its next sample. */
	struct ref_syscall_tp tp;
	uint64_t tp_left;

	struct ref_exec_mark exec;
	struct ref_tracer *tracer; /* samples it from outside (event_trace.c), or NULL */

	struct ref_sampler_ops ops;
	void *priv;
	int has_sampler;
	int provider_asked;       /* env->provider was asked for a profiler (once an event) */
	int injected;             /* driven by ref_engine_inject_sample(): profiler muted */
	struct ref_fasync fasync;
};

/* What the events of one engine share, handed down by the engine that owns them (it
 * embeds this in struct ref_engine, engine/engine.h): the lock all event state is
 * under, the limits and policy calls are judged by, the mappings and their mlock
 * accounting, the host lookups' cache, and the owner's fd table, which SET_OUTPUT
 * names its target in. */
struct ref_event_env {
	pthread_mutex_t lock;
	pthread_cond_t wake;      /* broadcast when a record lands in a ring */
	struct ref_policy policy;
	struct ref_limits lim;
	struct ref_mapping *maps;
	long user_locked;         /* perf_mlock pages charged, as user->perf_mlock */
	long pinned;              /* pages charged past the allowance, as mm->pinned_vm */
	struct ref_host_cache host; /* what the /proc lookups at an overflow keep */
	/* The event behind one of the owner's fds, or NULL. */
	struct ref_event *(*fd_lookup)(struct ref_event_env *env, int fd);
	/* Profiles the sampling events no caller attached a profiler to (attach NULL:
	 * none does). */
	struct ref_profiler_provider provider;
};

/* Profiler hooks to run once the engine lock is dropped. */
struct ref_defer_item {
	struct ref_event *ev;
	int what; /* REF_DEFER_* */
};
#define REF_DEFER_START 1
#define REF_DEFER_STOP 2
#define REF_DEFER_RELEASE 3
#define REF_DEFER_STOP_LAST 4 /* the event is being released: holds no reference */
#define REF_DEFER_RECONFIGURE 5
#define REF_DEFER_PROVIDE 6 /* ask env->provider for the event's profiler */
struct ref_defer {
	struct ref_defer_item *items;
	size_t nr, cap;
	int oom;
};

/* ---- sources (event_source.c) ---- */
/* proc_tid: tid as /proc names it (ref_event_task_proc_id()), looked up once by the
 * caller for both of an event's sources. */
int ref_event_source_init(struct ref_source *s, enum ref_kind kind, const struct pecs_attr *a,
			  pid_t tid, pid_t proc_tid, int same_process, int for_time);
uint64_t ref_event_source_read(struct ref_source *s);
/* Frees what init allocated; the source then reads as if it had no earlier threads. */
void ref_event_source_fini(struct ref_source *s);
/* 0 when a task event bound to cpu (>= 0) cannot be counting now, else 1. */
int ref_event_source_on_cpu(pid_t tid, int cpu);
/* ---- tasks (event_task.c) ---- */
/* pid 0: the calling thread; else that task (ESRCH if none). */
int ref_event_task_find(pid_t pid, pid_t *tid, int *same_process);
/* 1 when the target thread has exited (a task event's leader is then gone: ENODEV). */
int ref_event_task_exited(pid_t tid, int same_process);
/* The id /proc knows the task by, or -1 when /proc cannot show it. */
pid_t ref_event_task_proc_id(pid_t tid, int same_process);
clockid_t ref_event_thread_clock(pid_t tid);

/* ---- enable_on_exec and remove_on_exec on another process (event_exec.c) ---- */
/* At open: arms a disabled enable_on_exec event, or a remove_on_exec one, on another
 * process. */
void ref_event_exec_arm(struct ref_event *ev);
/* At each sync of an armed event (and of its members, for a leader) whose task no
 * tracer follows: applies the exec once its task executed. Counting only: a sampling
 * event's profiler is not started by it. */
void ref_event_exec_check(struct ref_event *ev);
/* What the kernel counted of an exec before the tracer saw it end (event_exec_moment.c):
 * the task's CPU time and page faults past perf_event_exec(). */
struct ref_exec_moment {
	uint64_t ns, faults;
};
/* At the exec stop of task pid, once for all its events. */
void ref_event_exec_moment(pid_t pid, struct ref_exec_moment *m);
/* From the tracer, at the task's exec: syncs the event (its group, for a leader) and
 * applies the exec as at m. */
void ref_event_exec_now(struct ref_event *ev, const struct ref_exec_moment *m);
/* The unit an exec's moment moves a source by: REF_UNIT_NS (a task clock), REF_UNIT_FAULTS
 * (page faults, minor or all), or 0 (event_source.c). */
#define REF_UNIT_NS 1
#define REF_UNIT_FAULTS 2
int ref_event_source_unit(const struct ref_source *s);

/* ---- sampling another process from outside (event_trace.c) ---- */
/* At open, from ref_event_exec_arm(): an armed sampling event joins its task's tracer,
 * which follows the task with ptrace from a thread of this process. */
void ref_event_trace_add(struct ref_event *ev);
/* At release, under the engine lock: the event leaves its tracer. */
void ref_event_trace_remove(struct ref_event *ev);

/* ---- side-band records (event_sideband.c): written when the event asks for them ---- */
struct ref_sb_map {
	uint64_t start, end, pgoff; /* pgoff in bytes, as /proc/PID/maps shows it */
	uint32_t maj, min, prot, flags;
	uint64_t ino, ino_generation;
	char name[4096];
};
/* src carries the task (pid, tid), the time and cpu for the sample_id_all trailer. */
void ref_event_sb_comm(struct ref_event *ev, const struct pecs_sample *src, const char *comm,
		       int exec);
void ref_event_sb_mmap(struct ref_event *ev, const struct pecs_sample *src,
		       const struct ref_sb_map *m);
void ref_event_sb_exit(struct ref_event *ev, const struct pecs_sample *src, uint32_t ppid);
/* src is the task that made the new one, pid/tid (its ppid and ptid). */
void ref_event_sb_fork(struct ref_event *ev, const struct pecs_sample *src, uint32_t pid,
		       uint32_t tid);

/* ---- what the calling thread did (event_tracepoint.c) ---- */
/* te happened in task `who` (pid, tid, time, cpu): a syscall tracepoint event it matches
 * counts it and samples it, a COMM goes to events that asked for it. */
void ref_event_task_event(struct ref_event *ev, const struct pecs_task_event *te,
			  const struct pecs_sample *who);

/* ---- the constructor (event_new.c) ---- */
/* The task an event is on: pid -1 for none (cpu-wide); proc_tid is tid as /proc names
 * it, looked up once per open (it costs system calls, more in a pid namespace whose
 * /proc is another's). */
struct ref_event_task {
	pid_t pid, tid, proc_tid;
	int same_process;
};
/* A new event with one reference (its fd's), in no group, off; NULL when its counter
 * sources cannot be read (the task is gone) or memory ran out. */
struct ref_event *ref_event_new(struct ref_event_env *env, const struct pecs_attr *a,
				enum ref_kind kind, const struct ref_syscall_tp *tp, uint64_t id,
				const struct ref_event_task *t, int cpu);

/* ---- cpu-wide events (event_cpu_wide.c) ---- */
/* 0, or -ENOSYS for a cpu-wide counter no user-space interface counts per CPU. */
int ref_event_cpu_wide_check(const struct ref_event *ev);

/* ---- groups (event_group.c) ---- */
int ref_event_group_add(struct ref_event *leader, struct ref_event *ev);
/* perf_group_detach(): a member leaves its group; a leader's members become singletons,
 * each rescheduled on d. */
void ref_event_group_detach(struct ref_event *ev, struct ref_defer *d);

/* ---- lifetime and state (event_state.c) ---- */
void ref_event_get(struct ref_event *ev);
void ref_event_put(struct ref_event *ev, struct ref_defer *d);
void ref_event_sync(struct ref_event *ev);
void ref_event_sync_group(struct ref_event *leader);
void ref_event_enable(struct ref_event *ev, struct ref_defer *d);
void ref_event_disable(struct ref_event *ev, struct ref_defer *d);
void ref_event_reset(struct ref_event *ev);
/* Applies fn to the event, or to its whole group with PECS_IOC_FLAG_GROUP. */
void ref_event_for_group(struct ref_event *ev, int group,
			 void (*fn)(struct ref_event *, struct ref_defer *), struct ref_defer *d);
void ref_event_update_userpage(struct ref_event *ev);
/* The one rule for whether an event runs: it is on and its group's leader is on. Applied
 * to ev (a member) or to its whole group (a leader) after any change of on or of
 * membership: ENABLE, DISABLE, the REFRESH limit, exec, a group's break-up. Profiler
 * hooks for each flip go on d; with d NULL (inside a delivery, or a sync, where no hook
 * can run) they are not queued, and a profiler that keeps delivering is told
 * REF_DELIVER_OFF. */
void ref_event_schedule(struct ref_event *ev, struct ref_defer *d);
/* Syncs what the change moves, sets ev->on, and schedules. */
void ref_event_set_on(struct ref_event *ev, int on, struct ref_defer *d);
/* Gives ev its profiler (ref_engine_attach_sampler()): -EBUSY when it has one, -EINVAL
 * for a counting event; a running event's start hook is queued on d. */
int ref_event_attach_sampler(struct ref_event *ev, const struct ref_sampler_ops *ops, void *priv,
			     struct ref_defer *d);
void ref_event_defer_add(struct ref_defer *d, struct ref_event *ev, int what);
/* Drops the engine lock, runs the hooks, takes the lock back. */
void ref_event_defer_run(struct ref_event_env *env, struct ref_defer *d);

/* ---- read (event_read.c) ---- */
ssize_t ref_event_read(struct ref_event *ev, void *buf, size_t count);
/* Fills v (and members[]) as read(2) and PERF_SAMPLE_READ report them. */
int ref_event_read_values(struct ref_event *ev, struct ref_read_values *v,
			  struct ref_read_member **members);

/* ---- ioctl (event_ioctl.c) ---- */
int ref_event_ioctl(struct ref_event *ev, unsigned long request, unsigned long arg,
		    struct ref_defer *d);

/* ---- ring buffers and mappings (event_rb.c) ---- */
/* *addr is read for MAP_FIXED or MAP_FIXED_NOREPLACE in flags, as mmap(2)'s addr; the
 * perf mappings a fixed one replaces are closed into d. */
int ref_event_mmap(struct ref_event *ev, size_t length, int prot, int flags, off_t offset,
		   void **addr, struct ref_defer *d);
int ref_event_munmap_locked(struct ref_event_env *env, void *addr, size_t length,
			    struct ref_defer *d);
int ref_event_set_output(struct ref_event *ev, struct ref_event *target);
void ref_event_rb_detach(struct ref_event *ev);
int ref_event_poll_locked(struct ref_event *ev);
/* ---- asynchronous notification (event_fasync.c) ---- */
/* fcntl(2)'s F_GETFL/F_SETFL, F_GETOWN(_EX)/F_SETOWN(_EX), F_GETSIG/F_SETSIG; sig_fd is
 * the number the caller knows the event by. A value or -errno. */
int ref_event_fcntl(struct ref_event *ev, int cmd, unsigned long arg, int sig_fd);
/* 1 when an overflow would signal someone (O_ASYNC, an owner, the fd open). */
int ref_event_fasync_armed(const struct ref_event *ev);
/* An overflow's kill_fasync(): reason POLL_IN, or POLL_HUP for REFRESH's last. */
void ref_event_fasync_signal(struct ref_event *ev, int reason);
/* The ring's wakeup hook: notes that a write reached a wakeup point. */
void ref_event_fasync_ring_woke(void *rb);
/* After ev wrote a record other than a sample (with rb->woke cleared before it):
 * perf_output_wakeup()'s POLL_IN when the write reached the ring's wakeup point. A
 * sample's overflow signals by itself. */
void ref_event_fasync_wrote(struct ref_event *ev);
/* event_fasync_relay.c: si queued by thread tid of this process to itself. prepare
 * takes the relay signal (0, or -EAGAIN when every real-time signal is in use); relay
 * is 0 once tid was told, -1 when it cannot be (no relay, the thread gone). */
int ref_event_fasync_relay_prepare(void);
int ref_event_fasync_relay(pid_t tid, const siginfo_t *si);

/* ---- samples (event_sample.c) ---- */
/* What a LOST record needs: the event that found space again and its sample. */
struct lost_cookie {
	struct ref_event *ev;
	const struct pecs_sample *s;
};
void ref_event_record_desc(const struct ref_event *ev, struct ref_record_desc *d);
/* Looks up, once the event is enabled, the task facts its samples carry. */
void ref_event_resolve_task(struct ref_event *ev);
int ref_event_deliver_locked(struct ref_event *ev, const struct pecs_sample *s);
/* nr samples the event's profiler dropped: the event's LOST, and its ring's. */
void ref_event_lost_locked(struct ref_event *ev, uint64_t nr);

#endif /* REF_EVENT_H */
