/* Engine internals shared by its files: the fd table (lock held) and flushing. */
#ifndef REF_ENGINE_H
#define REF_ENGINE_H

#include <pthread.h>

#include "ref/event/event.h"

/* All of one engine's state: what its events share (env), its ids and its fd table. */
struct ref_engine {
	struct ref_event_env env;
	uint64_t next_id;
	int first_fd;
	struct ref_event **fds;
	size_t nr_fds;
};

/* The event behind an engine fd, or NULL. */
struct ref_event *ref_engine_fd_lookup(struct ref_engine *e, int fd);
/* Installs ev at the lowest free engine fd; returns the fd or -ENOMEM. */
int ref_engine_fd_install(struct ref_engine *e, struct ref_event *ev);
void ref_engine_fd_remove(struct ref_engine *e, int fd);

int ref_engine_open_locked(struct ref_engine *e, struct pecs_attr *uattr, pid_t pid, int cpu,
			   int group_fd, unsigned long flags);

/* engine_flush.c: have live profilers deliver the samples a call depends on. Take the
 * engine lock themselves: call them without it. */
void ref_engine_flush_for_ioctl(struct ref_engine *e, int fd, unsigned long request,
				unsigned long arg);
void ref_engine_flush_for_read(struct ref_engine *e, int fd);
void ref_engine_flush_ring(struct ref_engine *e, int fd);

#endif /* REF_ENGINE_H */
