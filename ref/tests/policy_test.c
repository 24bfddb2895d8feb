/* The security policy: paranoid levels, capabilities, task ownership, LSM-style hooks,
 * and where open, read, ioctl and mmap consult them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "helpers.h"
#include "ref/policy/policy.h"

static int try_open(const struct ref_policy *p, struct pecs_attr a, pid_t pid, int cpu)
{
	struct ref_engine *e = engine_with(p);
	int fd;

	assert_non_null(e);
	fd = ref_engine_open(e, &a, pid, cpu, -1, 0);
	ref_engine_free(e);
	return fd < 0 ? fd : 0;
}

static void test_rules_table(void **state)
{
	struct ref_policy p;

	(void)state;
	for (int par = -1; par <= 4; par++) {
		p = policy_nobody(par);
		assert_int_equal(ref_policy_allow_kernel(&p), par > 1 ? -EACCES : 0);
		assert_int_equal(ref_policy_allow_cpu(&p), par > 0 ? -EACCES : 0);
		assert_int_equal(ref_policy_allow_open(&p), par > 2 ? -EACCES : 0);
		assert_int_equal(ref_policy_allow_mlock_over(&p), par > -1 ? -EPERM : 0);
		assert_int_equal(ref_policy_allow_query_bpf(&p), -EPERM);
		/* CAP_PERFMON lifts the kernel/cpu rules but not paranoid > 2 */
		p.caps = REF_CAP_MASK(REF_CAP_PERFMON);
		assert_int_equal(ref_policy_allow_kernel(&p), 0);
		assert_int_equal(ref_policy_allow_cpu(&p), 0);
		assert_int_equal(ref_policy_allow_open(&p), par > 2 ? -EACCES : 0);
		assert_int_equal(ref_policy_allow_query_bpf(&p), 0);
		p.caps = REF_CAP_MASK(REF_CAP_SYS_ADMIN);
		assert_int_equal(ref_policy_allow_kernel(&p), 0);
		assert_int_equal(ref_policy_allow_open(&p), 0);
		p.caps = REF_CAP_MASK(REF_CAP_IPC_LOCK);
		assert_int_equal(ref_policy_allow_mlock_over(&p), 0);
		assert_int_equal(ref_policy_allow_kernel(&p), par > 1 ? -EACCES : 0);
	}
	p = policy_nobody(2);
	p.lsm_deny = REF_LSM_DENY_READ;
	assert_int_equal(ref_policy_allow_read(&p), -EACCES);
	assert_int_equal(ref_policy_allow_write(&p), 0);
}

static void test_open_unprivileged(void **state)
{
	struct ref_policy p2 = policy_nobody(2), p1 = policy_nobody(1), p0 = policy_nobody(0);
	struct ref_policy p3 = policy_nobody(3), root3 = policy_root();
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK), k = a, cc, ph, ns;

	(void)state;
	root3.paranoid = 3;
	k.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	cc = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_CALLCHAIN);
	ph = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_PHYS_ADDR);
	ns = a;
	ns.flags |= PECS_ATTR_NAMESPACES;

	assert_int_equal(try_open(&p2, a, 0, -1), 0);
	assert_int_equal(try_open(&p2, k, 0, -1), -EACCES);
	assert_int_equal(try_open(&p2, a, -1, 0), -EACCES);
	/* measured on 6.18 (uid 65534, paranoid 2): both open */
	assert_int_equal(try_open(&p2, cc, 0, -1), 0);
	cc.flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
	assert_int_equal(try_open(&p2, cc, 0, -1), 0);
	cc.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	assert_int_equal(try_open(&p2, cc, 0, -1), -EACCES);
	assert_int_equal(try_open(&p2, ph, 0, -1), -EACCES);
	assert_int_equal(try_open(&p2, ns, 0, -1), -EACCES);
	/* pid 1 belongs to root, not to uid 65534 */
	assert_int_equal(try_open(&p2, a, 1, -1), -EACCES);
	/* a thread of the caller's own process is always allowed */
	assert_int_equal(try_open(&p2, a, getpid(), -1), 0);

	assert_int_equal(try_open(&p1, k, 0, -1), 0);
	assert_int_equal(try_open(&p1, a, -1, 0), -EACCES);
	assert_int_equal(try_open(&p1, ph, 0, -1), 0);
	assert_int_equal(try_open(&p1, ns, 0, -1), -EACCES); /* namespaces need perfmon */
	assert_int_equal(try_open(&p0, a, -1, 0), 0);

	assert_int_equal(try_open(&p3, a, 0, -1), -EACCES);
	assert_int_equal(try_open(&root3, k, -1, 0), 0);
}

/* Permission checks come after the PMU lookup and before the group rules. */
static void test_open_order(void **state)
{
	struct ref_policy p2 = policy_nobody(2);
	struct pecs_attr a = attr_counting(PECS_SW_TASK_CLOCK);

	(void)state;
	/* paranoid-level checks on the attr come before the frequency */
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	a.flags |= PECS_ATTR_FREQ;
	a.sample_period = 100001;
	assert_int_equal(try_open(&p2, a, 0, -1), -EACCES);
	/* the task check comes after the PMU: ENOENT wins */
	a = attr_counting(PECS_SW_TASK_CLOCK);
	a.type = 1000;
	assert_int_equal(try_open(&p2, a, 1, -1), -ENOENT);
	assert_int_equal(try_open(&p2, a, -1, 0), -ENOENT);
	/* leader on another task: EACCES before the group's EINVAL */
	{
		struct ref_policy root = policy_root();
		struct ref_engine *e = engine_with(&root);
		struct ref_engine *u = engine_with(&p2);
		struct pecs_attr b = attr_counting(PECS_SW_TASK_CLOCK);
		int l = ref_engine_open(e, &b, 1, -1, -1, 0), l2;

		assert_true(l >= 0);
		assert_int_equal(ref_engine_open(e, &b, 0, -1, l, 0), -EINVAL);
		l2 = ref_engine_open(u, &b, 0, -1, -1, 0);
		assert_true(l2 >= 0);
		assert_int_equal(ref_engine_open(u, &b, 1, -1, l2, 0), -EACCES);
		/* a cpu-wide counter ref has no source for passes the PMU as on Linux:
		 * perf_allow_cpu()'s EACCES, the group's EINVAL, then ref's ENOSYS */
		b = attr_counting(PECS_SW_PAGE_FAULTS);
		assert_int_equal(ref_engine_open(u, &b, -1, 0, -1, 0), -EACCES);
		assert_int_equal(ref_engine_open(e, &b, -1, 0, l, 0), -EINVAL);
		assert_int_equal(ref_engine_open(e, &b, -1, 0, -1, 0), -ENOSYS);
		ref_engine_free(u);
		ref_engine_free(e);
	}
}

static void test_lsm_hooks(void **state)
{
	struct ref_policy p = policy_root();
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	struct ref_engine *e;
	uint64_t v;
	void *m;
	int fd;

	(void)state;
	p.lsm_deny = REF_LSM_DENY_OPEN;
	assert_int_equal(try_open(&p, a, 0, -1), -EACCES);
	p.lsm_deny = REF_LSM_DENY_CPU;
	assert_int_equal(try_open(&p, a, 0, -1), 0);
	assert_int_equal(try_open(&p, a, -1, 0), -EACCES);
	p.lsm_deny = REF_LSM_DENY_KERNEL;
	a.flags &= ~PECS_ATTR_EXCLUDE_KERNEL;
	assert_int_equal(try_open(&p, a, 0, -1), -EACCES);
	a.flags |= PECS_ATTR_EXCLUDE_KERNEL;

	p.lsm_deny = REF_LSM_DENY_READ;
	e = engine_with(&p);
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	assert_true(fd >= 0);
	assert_int_equal(ref_engine_read(e, fd, &v, 8), -EACCES);
	assert_int_equal(ref_engine_mmap(e, fd, 3 * 4096, PROT_READ, MAP_SHARED, 0, &m), -EACCES);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0), 0);
	ref_engine_free(e);

	p.lsm_deny = REF_LSM_DENY_WRITE;
	e = engine_with(&p);
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	assert_int_equal(ref_engine_read(e, fd, &v, 8), 8);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0), -EACCES);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ID, (unsigned long)&v), -EACCES);
	ref_engine_free(e);
}

/* Beyond perf_event_mlock_kb per CPU and RLIMIT_MEMLOCK: EPERM without CAP_IPC_LOCK. */
static void test_mlock(void **state)
{
	struct ref_policy nobody = policy_nobody(2), root = policy_root();
	struct ref_config c = {.size = sizeof(c), .ncpus = 2, .page_size = 4096, .max_stack = 127,
			       .max_sample_rate = 100000, .mlock_kb = 4};
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 100000, PECS_SAMPLE_IP);
	struct rlimit old, tiny = {4096, 4096};
	struct ref_engine *e;
	void *m, *m2;
	int fd, fd2;

	(void)state;
	getrlimit(RLIMIT_MEMLOCK, &old);
	tiny.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &tiny), 0);
	c.policy = &nobody;
	e = ref_engine_new(&c);
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	fd2 = ref_engine_open(e, &a, 0, -1, -1, 0);
	/* allowance: 1 page per CPU x 2 CPUs, plus 1 page of RLIMIT_MEMLOCK */
	assert_int_equal(ref_engine_mmap(e, fd, 3 * 4096, PROT_READ, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_mmap(e, fd2, 2 * 4096, PROT_READ, MAP_SHARED, 0, &m2), -EPERM);
	/* unmapping gives the pages back */
	assert_int_equal(ref_engine_munmap(e, m, 3 * 4096), 0);
	assert_int_equal(ref_engine_mmap(e, fd2, 2 * 4096, PROT_READ, MAP_SHARED, 0, &m2), 0);
	ref_engine_free(e);
	c.policy = &root;
	e = ref_engine_new(&c);
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	assert_int_equal(ref_engine_mmap(e, fd, 9 * 4096, PROT_READ, MAP_SHARED, 0, &m), 0);
	ref_engine_free(e);
	setrlimit(RLIMIT_MEMLOCK, &old);
}

static void test_from_host(void **state)
{
	struct ref_policy p;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int want = 3;

	(void)state;
	if (f) {
		assert_int_equal(fscanf(f, "%d", &want), 1);
		fclose(f);
	}
	assert_int_equal(ref_policy_from_host(&p), 0);
	assert_int_equal(p.paranoid, want);
	assert_int_equal(p.uid, getuid());
	assert_int_equal(p.size, sizeof(p));
	/* root holds every capability; others at least not more than root */
	if (geteuid() == 0)
		assert_true(ref_policy_perfmon(&p));
	/* a newer caller's unknown fields must be zero */
	{
		unsigned char big[sizeof(p) + 8] = {0};
		struct ref_policy out;

		memcpy(big, &p, sizeof(p));
		((struct ref_policy *)big)->size = sizeof(big);
		assert_int_equal(ref_policy_copy(&out, (struct ref_policy *)big), 0);
		big[sizeof(p) + 3] = 1;
		assert_int_equal(ref_policy_copy(&out, (struct ref_policy *)big), -E2BIG);
	}
}

static void test_host_facts(void **state)
{
	struct ref_policy root = policy_root(), nobody = policy_nobody(1);
	struct ref_engine *e = engine_with(&root);
	struct pecs_host_facts f = {.size = sizeof(f)};

	(void)state;
	assert_int_equal(ref_engine_host_facts(e, &f), 0);
	assert_int_equal(f.ncpus, 2);
	assert_int_equal(f.page_size, 4096);
	assert_int_equal(f.max_stack, 127);
	assert_int_equal(f.max_sample_rate, 100000);
	assert_int_equal(f.mlock_kb, 516);
	assert_int_equal(f.paranoid, 2);
	assert_int_equal(f.privileged, 1);
	assert_int_equal(f.attr_size, 136);
	assert_memory_equal(f.kernel_release, "ref on ", 7);
	f.size = 8;
	assert_int_equal(ref_engine_host_facts(e, &f), -EINVAL);
	ref_engine_free(e);
	e = engine_with(&nobody);
	f.size = sizeof(f);
	assert_int_equal(ref_engine_host_facts(e, &f), 0);
	assert_int_equal(f.paranoid, 1);
	assert_int_equal(f.privileged, 0);
	ref_engine_free(e);
	/* a newer caller's config: unknown trailing fields must be zero */
	{
		unsigned char big[sizeof(struct ref_config) + 8] = {0};
		struct ref_config *c = (struct ref_config *)big;

		c->size = sizeof(big);
		e = ref_engine_new(c);
		assert_non_null(e);
		ref_engine_free(e);
		big[sizeof(struct ref_config) + 1] = 1;
		assert_null(ref_engine_new(c));
		assert_int_equal(errno, E2BIG);
		c->size = 4;
		assert_null(ref_engine_new(c));
		assert_int_equal(errno, EINVAL);
	}
	/* zero config fields take the host's values */
	e = ref_engine_new(NULL);
	assert_non_null(e);
	assert_int_equal(ref_engine_host_facts(e, &f), 0);
	assert_int_equal(f.page_size, sysconf(_SC_PAGESIZE));
	assert_true(f.ncpus >= 1);
	assert_true(f.max_stack > 0);
	ref_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_table),
		cmocka_unit_test(test_open_unprivileged),
		cmocka_unit_test(test_open_order),
		cmocka_unit_test(test_lsm_hooks),
		cmocka_unit_test(test_mlock),
		cmocka_unit_test(test_from_host),
		cmocka_unit_test(test_host_facts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
