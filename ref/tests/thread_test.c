/* Concurrency: ioctls from one thread while another delivers samples and a third reads
 * the ring lock-free; and the profiler hooks' calling rules. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "helpers.h"

#define PG 4096
#define N_SAMPLES 20000

struct run {
	struct ref_engine *e;
	int fd;
	void *map;
	int done; /* __atomic */
	uint64_t records;
};

static void *toggler(void *arg)
{
	struct run *r = arg;

	for (int i = 0; !__atomic_load_n(&r->done, __ATOMIC_ACQUIRE); i++) {
		ref_engine_ioctl(r->e, r->fd, (i & 1) ? PECS_IOC_DISABLE : PECS_IOC_ENABLE, 0);
		if (!(i % 64)) {
			uint64_t v[2];

			assert_int_equal(ref_engine_read(r->e, r->fd, v, sizeof(v)), 16);
		}
	}
	ref_engine_ioctl(r->e, r->fd, PECS_IOC_ENABLE, 0);
	return NULL;
}

static void *injector(void *arg)
{
	struct run *r = arg;
	uint64_t ips[3] = {1, 2, 3};
	struct pecs_sample s = {.size = sizeof(s), .pid = 1, .tid = 1, .nr_ips = 3, .ips = ips};

	for (int i = 0; i < N_SAMPLES; i++) {
		/* the toggler may sit disabled for a whole time slice: re-enable now and then
		 * so both states are exercised on every run */
		if (!(i % 50))
			ref_engine_ioctl(r->e, r->fd, PECS_IOC_ENABLE, 0);
		ips[0] = (uint64_t)i;
		assert_true(ref_engine_inject_sample(r->e, r->fd, &s) >= 0);
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A libperf-style reader: acquire head, walk records, release tail. */
static void *reader(void *arg)
{
	struct run *r = arg;
	struct pecs_mmap_page *pg = r->map;
	const char *data = (const char *)r->map + PG;
	uint64_t size = pg->data_size, tail = 0;

	for (;;) {
		uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);

		while (tail < head) {
			struct pecs_record_header h;

			/* headers never straddle the end: records are 8-byte multiples */
			memcpy(&h, data + (tail & (size - 1)), sizeof(h));
			assert_true(h.type == PECS_RECORD_SAMPLE || h.type == PECS_RECORD_LOST);
			assert_true(h.size >= 8 && h.size % 8 == 0);
			if (h.type == PECS_RECORD_SAMPLE)
				r->records++;
			tail += h.size;
		}
		__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
		sched_yield();
		if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) &&
		    tail == __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE))
			break;
	}
	return NULL;
}

static void test_toggle_while_injecting(void **state)
{
	struct ref_policy p = policy_root();
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 100000,
					   PECS_SAMPLE_IP | PECS_SAMPLE_TID | PECS_SAMPLE_CALLCHAIN);
	struct run r = {0};
	pthread_t t1, t2, t3;
	uint64_t v[2];

	(void)state;
	a.read_format = PECS_FORMAT_LOST;
	a.flags |= PECS_ATTR_EXCLUDE_CALLCHAIN_KERNEL;
	r.e = engine_with(&p);
	r.fd = ref_engine_open(r.e, &a, 0, -1, -1, 0);
	assert_true(r.fd >= 0);
	assert_int_equal(ref_engine_mmap(r.e, r.fd, 5 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &r.map), 0);
	pthread_create(&t3, NULL, reader, &r);
	pthread_create(&t1, NULL, toggler, &r);
	pthread_create(&t2, NULL, injector, &r);
	pthread_join(t2, NULL);
	pthread_join(t1, NULL);
	pthread_join(t3, NULL);
	assert_int_equal(ref_engine_read(r.e, r.fd, v, sizeof(v)), 16);
	/* every sample was written, lost, or dropped while disabled: never more */
	assert_true(r.records + v[1] <= N_SAMPLES);
	assert_true(r.records > 0);
	ref_engine_free(r.e);
}

struct hooks {
	int starts, stops, releases, delivered_in_stop;
	struct ref_event *ev;
};

static int h_start(void *priv, struct ref_event *ev)
{
	struct hooks *h = priv;

	h->starts++;
	h->ev = ev;
	return 0;
}

static void h_stop(void *priv, struct ref_event *ev)
{
	struct hooks *h = priv;
	uint64_t ip = 0x42;
	struct pecs_sample s = {.size = sizeof(s), .nr_ips = 1, .ips = &ip};

	h->stops++;
	/* a profiler drains what it buffered: the engine still takes it */
	if (ref_event_deliver_sample(ev, &s) == 0)
		h->delivered_in_stop++;
}

static void h_release(void *priv)
{
	((struct hooks *)priv)->releases++;
}

static void test_sampler_hooks(void **state)
{
	/* A profiler without the optional hooks (flush, reconfigure). */
	static const struct ref_sampler_ops ops = {
		.start = h_start, .stop = h_stop, .release = h_release,
	};
	struct ref_policy p = policy_root();
	struct ref_engine *e = engine_with(&p);
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 250000, PECS_SAMPLE_IP);
	struct hooks h = {0};
	struct ref_event_info info;
	void *m;
	int fd, c;

	(void)state;
	a.flags |= PECS_ATTR_DISABLED;
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	assert_int_equal(ref_engine_mmap(e, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_attach_sampler(e, fd, &ops, &h), 0);
	assert_int_equal(ref_engine_attach_sampler(e, fd, &ops, &h), -EBUSY);
	{
		struct pecs_attr ca = attr_counting(PECS_SW_TASK_CLOCK);

		c = ref_engine_open(e, &ca, 0, -1, -1, 0);
		assert_int_equal(ref_engine_attach_sampler(e, c, &ops, &h), -EINVAL);
		ref_engine_close(e, c);
	}
	assert_int_equal(h.starts, 0);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(h.starts, 1);
	assert_int_equal(ref_event_get_info(h.ev, &info), 0);
	assert_int_equal(info.period, 250000);
	assert_int_equal(info.id, event_id(e, fd));
	assert_int_equal(info.max_stack, 127);
	assert_int_equal(info.type, PECS_TYPE_SOFTWARE);
	assert_int_equal(info.config, PECS_SW_TASK_CLOCK);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(h.starts, 1);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_DISABLE, 0), 0);
	assert_int_equal(h.stops, 1);
	assert_int_equal(h.delivered_in_stop, 1);
	assert_int_equal(((struct pecs_mmap_page *)m)->data_head, 16);
	/* after stop returns, the event is off: deliveries are dropped */
	{
		uint64_t ip = 1;
		struct pecs_sample s = {.size = sizeof(s), .nr_ips = 1, .ips = &ip};

		assert_int_equal(ref_event_deliver_sample(h.ev, &s), REF_DELIVER_OFF);
	}
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(h.starts, 2);
	/* close keeps the event while mapped; munmap releases it: stop, then release */
	assert_int_equal(ref_engine_close(e, fd), 0);
	assert_int_equal(h.releases, 0);
	assert_int_equal(ref_engine_munmap(e, m, 3 * PG), 0);
	assert_int_equal(h.stops, 2);
	assert_int_equal(h.releases, 1);
	ref_engine_free(e);
}

/* A profiler that holds its samples until flushed, as the live sampler's buffer does. */
struct held {
	struct ref_event *ev;
	int pending;       /* samples taken, not yet delivered */
	uint64_t drops;    /* samples it could not keep */
	int flushes, reconfigures;
};

static int f_start(void *priv, struct ref_event *ev)
{
	((struct held *)priv)->ev = ev;
	return 0;
}

static void f_flush(void *priv, struct ref_event *ev)
{
	struct held *h = priv;
	uint64_t ip = 0x1000;
	struct pecs_sample s = {.size = sizeof(s), .nr_ips = 1, .ips = &ip};

	h->flushes++;
	for (; h->pending > 0; h->pending--)
		ref_event_deliver_sample(ev, &s);
	if (h->drops)
		assert_int_equal(ref_event_deliver_lost(ev, h->drops), 0);
	h->drops = 0;
}

static void f_stop(void *priv, struct ref_event *ev)
{
	f_flush(priv, ev);
}

static void f_release(void *priv)
{
	(void)priv;
}

static void f_reconfigure(void *priv, struct ref_event *ev)
{
	struct held *h = priv;
	struct ref_event_info info;

	assert_int_equal(ref_event_get_info(ev, &info), 0); /* not under the engine lock */
	assert_int_equal(info.period, 500000);
	h->reconfigures++;
}

static const struct ref_sampler_ops held_ops = {
	.start = f_start, .stop = f_stop,
	.release = f_release, .flush = f_flush, .reconfigure = f_reconfigure,
};

static uint64_t head_of(void *m)
{
	return __atomic_load_n(&((struct pecs_mmap_page *)m)->data_head, __ATOMIC_ACQUIRE);
}

/* Samples taken before PAUSE_OUTPUT(1) are written, those taken while paused are lost
 * even when the profiler hands them over only after the resume: the ioctl flushes
 * first. read() flushes too, so LOST is current. */
static void test_flush_orders_samples(void **state)
{
	struct ref_policy p = policy_root();
	struct ref_engine *e = engine_with(&p);
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 250000, PECS_SAMPLE_IP);
	struct held h = {0};
	uint64_t v[2];
	void *m;
	int fd;

	(void)state;
	a.read_format = PECS_FORMAT_LOST;
	a.flags &= ~PECS_ATTR_SAMPLE_ID_ALL;
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	assert_int_equal(ref_engine_mmap(e, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_attach_sampler(e, fd, &held_ops, &h), 0);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0), 0);
	h.pending = 3;
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_PAUSE_OUTPUT, 1), 0);
	assert_int_equal(head_of(m), 3 * 16);
	h.pending = 2;
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_PAUSE_OUTPUT, 0), 0);
	assert_int_equal(head_of(m), 3 * 16);
	assert_int_equal(ref_engine_read(e, fd, v, sizeof(v)), 16);
	assert_int_equal(v[1], 2);
	/* Profiler drops count as lost at once, and go out in the next LOST record. */
	h.drops = 5;
	assert_int_equal(ref_engine_read(e, fd, v, sizeof(v)), 16);
	assert_int_equal(v[1], 7);
	h.pending = 1;
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_DISABLE, 0), 0);
	{
		const uint8_t *data = (const uint8_t *)m + PG;
		struct pecs_record_header hd;
		uint64_t body[2];

		assert_int_equal(head_of(m), 3 * 16 + 24 + 16);
		memcpy(&hd, data + 48, sizeof(hd));
		assert_int_equal(hd.type, PECS_RECORD_LOST);
		assert_int_equal(hd.size, 24);
		memcpy(body, data + 56, sizeof(body));
		assert_int_equal(body[0], event_id(e, fd));
		assert_int_equal(body[1], 7);
		memcpy(&hd, data + 72, sizeof(hd));
		assert_int_equal(hd.type, PECS_RECORD_SAMPLE);
	}
	assert_true(h.flushes >= 4);
	{
		uint64_t np = 500000;

		/* Off: the next enable reads the period anyway. */
		assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_PERIOD, (unsigned long)&np), 0);
		assert_int_equal(h.reconfigures, 0);
		assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0), 0);
		assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_PERIOD, (unsigned long)&np), 0);
		assert_int_equal(h.reconfigures, 1);
		assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_DISABLE, 0), 0);
	}
	/* Off: drops are not the event's any more (perf_output_begin never ran). */
	assert_int_equal(ref_event_deliver_lost(h.ev, 3), 0);
	assert_int_equal(ref_engine_read(e, fd, v, sizeof(v)), 16);
	assert_int_equal(v[1], 7);
	ref_engine_close(e, fd);
	ref_engine_munmap(e, m, 3 * PG);
	ref_engine_free(e);
}

/* Drops while the ring already owes a LOST record go out in that one record. */
static void test_profiler_lost_joins_ring_lost(void **state)
{
	struct ref_policy p = policy_root();
	struct ref_engine *e = engine_with(&p);
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 250000, PECS_SAMPLE_IP);
	struct held h = {0};
	uint64_t v[2], body[2];
	const uint8_t *data;
	void *m;
	int fd;

	(void)state;
	a.read_format = PECS_FORMAT_LOST;
	a.flags &= ~PECS_ATTR_SAMPLE_ID_ALL;
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	assert_int_equal(ref_engine_mmap(e, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_attach_sampler(e, fd, &held_ops, &h), 0);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0), 0);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_PAUSE_OUTPUT, 1), 0);
	h.pending = 2;
	h.drops = 4;
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_PAUSE_OUTPUT, 0), 0);
	h.pending = 1;
	assert_int_equal(ref_engine_read(e, fd, v, sizeof(v)), 16);
	assert_int_equal(v[1], 6);
	data = (const uint8_t *)m + PG;
	assert_int_equal(head_of(m), 24 + 16);
	memcpy(body, data + 8, sizeof(body));
	assert_int_equal(body[1], 6);
	ref_engine_close(e, fd);
	ref_engine_munmap(e, m, 3 * PG);
	ref_engine_free(e);
}

/* Once a caller injects, the ring holds exactly what it injected. */
static void test_injection_mutes_profiler(void **state)
{
	struct ref_policy p = policy_root();
	struct ref_engine *e = engine_with(&p);
	struct pecs_attr a = attr_sampling(PECS_SW_TASK_CLOCK, 250000, PECS_SAMPLE_IP);
	struct held h = {0};
	uint64_t ip = 0x2000, v[2];
	struct pecs_sample s = {.size = sizeof(s), .nr_ips = 1, .ips = &ip};
	void *m;
	int fd;

	(void)state;
	a.read_format = PECS_FORMAT_LOST;
	fd = ref_engine_open(e, &a, 0, -1, -1, 0);
	assert_int_equal(ref_engine_mmap(e, fd, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &m), 0);
	assert_int_equal(ref_engine_attach_sampler(e, fd, &held_ops, &h), 0);
	assert_int_equal(ref_engine_ioctl(e, fd, PECS_IOC_ENABLE, 0), 0);
	h.pending = 1;
	assert_int_equal(ref_engine_read(e, fd, v, sizeof(v)), 16);
	assert_int_equal(head_of(m), 16); /* the profiler's, before any injection */
	assert_int_equal(ref_engine_inject_sample(e, fd, &s), 0);
	h.pending = 2;
	h.drops = 3;
	assert_int_equal(ref_engine_read(e, fd, v, sizeof(v)), 16);
	assert_int_equal(v[1], 0);
	assert_int_equal(head_of(m), 32);
	assert_int_equal(ref_event_deliver_sample(h.ev, &s), REF_DELIVER_OFF);
	ref_engine_close(e, fd);
	ref_engine_munmap(e, m, 3 * PG);
	ref_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_toggle_while_injecting),
		cmocka_unit_test(test_sampler_hooks),
		cmocka_unit_test(test_flush_orders_samples),
		cmocka_unit_test(test_profiler_lost_joins_ring_lost),
		cmocka_unit_test(test_injection_mutes_profiler),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
