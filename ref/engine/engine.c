/* Engine creation, configuration and the fd table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ref/engine/engine.h"
#include "pecs/opts.h"
#include "ref/policy/policy.h"

#define REF_FIRST_FD 1000

static int sysctl_int(const char *name, int fallback)
{
	char path[128];
	FILE *f;
	int v;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	f = fopen(path, "re");
	if (!f)
		return fallback;
	if (fscanf(f, "%d", &v) != 1)
		v = fallback;
	fclose(f);
	return v;
}

/* Copies a caller's config (pecs/opts.h rules); NULL is all defaults. */
static int config_copy(struct ref_config *dst, const struct ref_config *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src)
		return 0;
	return pecs_opts_load(dst, sizeof(*dst), src, PECS_OPTS_SIZE_TO(ref_config, first_fd));
}

/* How events reach the fd table: the env they hold is embedded in its engine. */
static struct ref_event *env_fd_lookup(struct ref_event_env *env, int fd)
{
	char *engine = (char *)env - offsetof(struct ref_engine, env);

	return ref_engine_fd_lookup((struct ref_engine *)engine, fd);
}

struct ref_engine *ref_engine_new(const struct ref_config *cfg)
{
	struct ref_config c;
	struct ref_engine *e;
	struct ref_limits *lim;
	int err;

	err = config_copy(&c, cfg);
	if (err) {
		errno = -err;
		return NULL;
	}
	if (c.ncpus < 0 || c.page_size < 0 || c.max_stack < 0 || c.max_sample_rate < 0 ||
	    c.mlock_kb < 0 || c.first_fd < 0 || (c.page_size & (c.page_size - 1))) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	if (c.policy)
		err = ref_policy_copy(&e->env.policy, c.policy);
	else
		err = ref_policy_from_host(&e->env.policy);
	if (c.profiler)
		e->env.provider = *c.profiler;
	if (err) {
		free(e);
		errno = -err;
		return NULL;
	}
	/* Linux bounds cpu by nr_cpu_ids, the possible CPUs. */
	lim = &e->env.lim;
	lim->ncpus = c.ncpus ? c.ncpus : (int)sysconf(_SC_NPROCESSORS_CONF);
	lim->page_size = c.page_size ? c.page_size : sysconf(_SC_PAGESIZE);
	lim->max_stack = c.max_stack ? c.max_stack : sysctl_int("perf_event_max_stack", 127);
	lim->max_sample_rate = c.max_sample_rate ? c.max_sample_rate
						 : sysctl_int("perf_event_max_sample_rate", 100000);
	lim->mlock_kb = c.mlock_kb ? c.mlock_kb : sysctl_int("perf_event_mlock_kb", 516);
	e->next_id = c.first_id ? c.first_id : 1;
	e->first_fd = c.first_fd ? c.first_fd : REF_FIRST_FD;
	e->env.host = (struct ref_host_cache)REF_HOST_CACHE_INIT;
	e->env.fd_lookup = env_fd_lookup;
	pthread_mutex_init(&e->env.lock, NULL);
	pthread_cond_init(&e->env.wake, NULL);
	return e;
}

void ref_engine_free(struct ref_engine *e)
{
	struct ref_defer d = {0};

	if (!e)
		return;
	pthread_mutex_lock(&e->env.lock);
	while (e->env.maps)
		ref_event_munmap_locked(&e->env, e->env.maps->addr, e->env.maps->len, &d);
	for (size_t i = 0; i < e->nr_fds; i++) {
		struct ref_event *ev = e->fds[i];

		if (ev) {
			e->fds[i] = NULL;
			ev->fd = -1;
			ref_event_put(ev, &d);
		}
	}
	ref_event_defer_run(&e->env, &d);
	pthread_mutex_unlock(&e->env.lock);
	free(e->fds);
	pthread_cond_destroy(&e->env.wake);
	pthread_mutex_destroy(&e->env.lock);
	free(e);
}

struct ref_event *ref_engine_fd_lookup(struct ref_engine *e, int fd)
{
	size_t i;

	if (fd < e->first_fd)
		return NULL;
	i = (size_t)(fd - e->first_fd);
	return i < e->nr_fds ? e->fds[i] : NULL;
}

int ref_engine_fd_install(struct ref_engine *e, struct ref_event *ev)
{
	size_t i;

	for (i = 0; i < e->nr_fds; i++)
		if (!e->fds[i])
			break;
	if (i == e->nr_fds) {
		size_t n = e->nr_fds ? e->nr_fds * 2 : 16;
		struct ref_event **t = realloc(e->fds, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		memset(t + e->nr_fds, 0, (n - e->nr_fds) * sizeof(*t));
		e->fds = t;
		e->nr_fds = n;
	}
	e->fds[i] = ev;
	ev->fd = e->first_fd + (int)i;
	return ev->fd;
}

void ref_engine_fd_remove(struct ref_engine *e, int fd)
{
	e->fds[fd - e->first_fd] = NULL;
}

int ref_engine_host_facts(struct ref_engine *e, struct pecs_host_facts *facts)
{
	/* The first version ended before kernel_release. */
	const size_t min_size = offsetof(struct pecs_host_facts, kernel_release);
	struct pecs_host_facts mine = { .size = sizeof(mine) }, *f = &mine;
	struct utsname u;

	if (!facts || pecs_opts_size(facts) < min_size)
		return -EINVAL;
	pthread_mutex_lock(&e->env.lock);
	f->ncpus = e->env.lim.ncpus;
	f->page_size = e->env.lim.page_size;
	f->max_stack = e->env.lim.max_stack;
	f->max_sample_rate = e->env.lim.max_sample_rate;
	f->mlock_kb = e->env.lim.mlock_kb;
	f->paranoid = e->env.policy.paranoid;
	f->privileged = ref_policy_perfmon(&e->env.policy);
	f->attr_size = PECS_ATTR_SIZE_LATEST;
	pthread_mutex_unlock(&e->env.lock);
	if (uname(&u) == 0)
		snprintf(f->kernel_release, sizeof(f->kernel_release), "ref on %.56s", u.release);
	return pecs_opts_store(facts, f, sizeof(*f), min_size);
}
