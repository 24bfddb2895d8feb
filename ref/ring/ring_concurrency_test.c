/* Concurrency. First, a reader thread following data_head through its own mapping while the writer writes
 * 1e5 records of varying length into a small writable ring. The reader must see every
 * record once, in order, intact (a checksum over each payload) and never a torn or
 * straddling header; LOST records the writer causes by retrying on a full ring must
 * account for exactly the writes the ring refused. Reader protocol as libperf/libbpf:
 * load-acquire data_head, read, store-release data_tail. Last, ref_ring_hold(): the
 * holder's calls skip the lock, another writer waits for the release; and several
 * writers at once, some holding the ring across yields, so that takers spin and sleep.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cmocka.h>

#include "pecs/abi.h"
#include "ref/ring/ring.h"

#define NR_RECORDS 100000u

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

/* Lengths from 24 to 1016 bytes, varied so that records end at every 8-byte offset. */
static size_t record_len(uint64_t seq)
{
	return 24 + 8 * (size_t)((seq * 2654435761u) % 125);
}

/* header | seq | pattern | fnv1a(everything before the last word) */
static void make_record(uint8_t *rec, uint64_t seq)
{
	size_t len = record_len(seq), i;
	uint32_t w0 = PECS_RECORD_SAMPLE, w1 = (uint32_t)len << 16;
	uint64_t sum;

	memcpy(rec, &w0, 4);
	memcpy(rec + 4, &w1, 4);
	memcpy(rec + 8, &seq, 8);
	for (i = 16; i < len - 8; i++)
		rec[i] = (uint8_t)(seq ^ i);
	sum = fnv1a(rec, len - 8);
	memcpy(rec + len - 8, &sum, 8);
}

struct reader {
	struct ref_ring *ring;
	uint8_t *base, *data;
	uint64_t size;
	/* results */
	uint64_t next_seq, lost_seen, lost_records, bad;
	const char *why;
	int stopped; /* set when the reader leaves, so a writer facing a full ring gives up */
};

static void reader_fail(struct reader *rd, const char *why)
{
	if (!rd->bad++)
		rd->why = why;
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct pecs_mmap_page *pg = (struct pecs_mmap_page *)rd->base;
	uint64_t tail = 0;
	uint8_t rec[65536];

	while (rd->next_seq < NR_RECORDS && !rd->bad) {
		uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);

		if (head == tail) {
			sched_yield();
			continue;
		}
		if (head - tail > rd->size) {
			reader_fail(rd, "head ran past the tail");
			break;
		}
		while (tail != head && !rd->bad) {
			size_t off = (size_t)(tail & (rd->size - 1)), first;
			struct pecs_record_header h;

			if (off + 8 > rd->size) {
				reader_fail(rd, "header straddles the end");
				break;
			}
			memcpy(&h, rd->data + off, sizeof(h));
			if (h.size < 8 || h.size % 8 || h.size > head - tail) {
				reader_fail(rd, "torn or bad header size");
				break;
			}
			first = rd->size - off < h.size ? rd->size - off : h.size;
			memcpy(rec, rd->data + off, first);
			memcpy(rec + first, rd->data, h.size - first);
			if (h.type == PECS_RECORD_LOST) {
				uint64_t n;

				memcpy(&n, rec + 16, 8);
				if (h.size != 24 || !n)
					reader_fail(rd, "bad LOST record");
				rd->lost_seen += n;
				rd->lost_records++;
			} else {
				uint64_t seq, sum;

				memcpy(&seq, rec + 8, 8);
				memcpy(&sum, rec + h.size - 8, 8);
				if (h.type != PECS_RECORD_SAMPLE || seq != rd->next_seq ||
				    h.size != record_len(seq))
					reader_fail(rd, "record out of order or misframed");
				else if (sum != fnv1a(rec, h.size - 8))
					reader_fail(rd, "checksum mismatch: torn record");
				rd->next_seq++;
			}
			tail += h.size;
		}
		/* D: every read above completes before the writer may reuse the space. */
		__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&rd->stopped, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void run(size_t nr_pages, uint64_t *retries_out)
{
	struct reader rd = { 0 };
	pthread_t th;
	uint8_t rec[1024];
	uint64_t seq, retries = 0;
	void *p;

	assert_int_equal(ref_ring_create(&rd.ring, nr_pages, 4096, 0), 0);
	assert_int_equal(ref_ring_map(rd.ring, PROT_READ | PROT_WRITE, &p), 0);
	rd.base = p;
	rd.data = rd.base + 4096;
	rd.size = ref_ring_data_size(rd.ring);
	assert_int_equal(pthread_create(&th, NULL, reader_main, &rd), 0);
	for (seq = 0; seq < NR_RECORDS; seq++) {
		int ret;

		make_record(rec, seq);
		while ((ret = ref_ring_write(rd.ring, rec, record_len(seq))) == -ENOSPC &&
		       !__atomic_load_n(&rd.stopped, __ATOMIC_ACQUIRE)) {
			retries++;
			sched_yield();
		}
		if (ret)
			break;
	}
	pthread_join(th, NULL);
	if (rd.bad)
		fail_msg("%s (%llu bad, at seq %llu)", rd.why, (unsigned long long)rd.bad,
			 (unsigned long long)rd.next_seq);
	assert_int_equal(rd.next_seq, NR_RECORDS);
	assert_int_equal(rd.lost_seen, retries);
	assert_int_equal(ref_ring_pending_lost(rd.ring), 0);
	*retries_out = retries;
	ref_ring_unmap(rd.ring, p);
	ref_ring_destroy(rd.ring);
}

static void test_small_ring_many_wraps(void **state)
{
	uint64_t retries;

	(void)state;
	/* 8 KiB for ~50 MiB of records: thousands of laps, and the writer often finds
	 * the ring full. */
	run(1 + 2, &retries);
	print_message("writer retried %llu times on a full ring\n", (unsigned long long)retries);
}

static void test_larger_ring(void **state)
{
	uint64_t retries;

	(void)state;
	run(1 + 64, &retries);
}

/* The metadata page's seqlock: a reader that retries while lock is odd or moved never
 * sees time_enabled and time_running from different updates (the writer keeps them
 * equal, so a mix shows). The fields are loaded with acquire rather than relaxed plus a
 * fence: the same order, in a form ThreadSanitizer checks. Reading the page through a
 * mapping of its own, TSan sees no address shared with the writer; the test still
 * checks the protocol's result. */
struct seq_reader {
	const struct pecs_mmap_page *pg;
	int stop;
	uint64_t reads, torn, max_seen; /* reads: the writer watches it (atomic) */
};

static void *seq_reader_main(void *arg)
{
	struct seq_reader *sr = arg;

	while (!__atomic_load_n(&sr->stop, __ATOMIC_ACQUIRE)) {
		uint32_t seq;
		uint64_t te, tr;

		do {
			seq = __atomic_load_n(&sr->pg->lock, __ATOMIC_ACQUIRE);
			te = __atomic_load_n(&sr->pg->time_enabled, __ATOMIC_ACQUIRE);
			tr = __atomic_load_n(&sr->pg->time_running, __ATOMIC_ACQUIRE);
		} while ((seq & 1) || __atomic_load_n(&sr->pg->lock, __ATOMIC_RELAXED) != seq);
		__atomic_store_n(&sr->reads, sr->reads + 1, __ATOMIC_RELAXED);
		if (te != tr)
			sr->torn++;
		if (te > sr->max_seen)
			sr->max_seen = te;
	}
	return NULL;
}

static void test_userpage_seqlock(void **state)
{
	struct seq_reader sr = { 0 };
	struct ref_ring *r;
	pthread_t th;
	uint64_t i;
	time_t t0;
	void *p;

	(void)state;
	assert_int_equal(ref_ring_create(&r, 2, 4096, 0), 0);
	assert_int_equal(ref_ring_map(r, PROT_READ, &p), 0);
	sr.pg = p;
	assert_int_equal(pthread_create(&th, NULL, seq_reader_main, &sr), 0);
	/* At least a million updates, and on until the reader has read a thousand times: a
	 * loaded machine can leave a new thread unscheduled through the whole million
	 * (seen once, beside four busy loops). A minute without one read is a host that
	 * does not run the thread, not a protocol failure. */
	t0 = time(NULL);
	for (i = 1; i <= 1000000 || __atomic_load_n(&sr.reads, __ATOMIC_RELAXED) < 1000; i++) {
		ref_ring_update_times(r, i, i);
		if (i > 1000000 && (i & 0xffff) == 0 && time(NULL) - t0 > 60)
			break;
	}
	__atomic_store_n(&sr.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	print_message("%llu updates, %llu consistent reads\n", (unsigned long long)(i - 1),
		      (unsigned long long)sr.reads);
	assert_int_equal(sr.torn, 0);
	assert_int_equal(sr.pg->lock, 2 * (i - 1));
	if (sr.reads == 0)
		skip(); /* the reader never ran: nothing was checked */
	ref_ring_unmap(r, p);
	ref_ring_destroy(r);
}

/* A second writer while the ring is held: it waits for the release, whatever the
 * schedule (the holder's own record always comes first). */
static void *late_writer(void *arg)
{
	uint64_t rec[3] = { PECS_RECORD_SAMPLE | 24ull << 48, 2, 0 };

	assert_int_equal(ref_ring_write(arg, rec, sizeof(rec)), 0);
	return NULL;
}

/* The holder of ref_ring_hold() writes and calls the ring's other functions without
 * taking the lock again (it is not recursive: taking it would hang); another thread's write
 * waits for ref_ring_release(). */
static void test_hold(void **state)
{
	uint64_t rec[3] = { PECS_RECORD_SAMPLE | 24ull << 48, 1, 0 };
	const uint64_t *d;
	struct ref_ring *r;
	pthread_t th;
	void *p;

	(void)state;
	assert_int_equal(ref_ring_create(&r, 2, 4096, 0), 0);
	assert_int_equal(ref_ring_map(r, PROT_READ | PROT_WRITE, &p), 0);
	ref_ring_hold(r);
	assert_int_equal(pthread_create(&th, NULL, late_writer, r), 0);
	sched_yield();
	assert_int_equal(ref_ring_write(r, rec, sizeof(rec)), 0);
	ref_ring_set_paused(r, 1);
	assert_int_equal(ref_ring_write(r, rec, sizeof(rec)), -ENOSPC);
	ref_ring_set_paused(r, 0);
	assert_int_equal(ref_ring_pending_lost(r), 1);
	ref_ring_update_userpage(r, 5, 6, 7);
	ref_ring_release(r);
	pthread_join(th, NULL);
	d = (const uint64_t *)((const uint8_t *)p + 4096);
	/* The holder's sample, the LOST record its paused write owed, the other's sample. */
	assert_int_equal(d[1], 1);
	assert_int_equal(d[3] & 0xffffffff, PECS_RECORD_LOST);
	assert_int_equal(d[5], 1);
	assert_int_equal(d[7], 2);
	assert_int_equal(ref_ring_head(r), 72);
	ref_ring_unmap(r, p);
	ref_ring_destroy(r);
}

/* Writers racing on one ring (the lock's own test: one exchange to take, a store to
 * drop, a futex sleep when contended). Each writes its records, tagged with its number
 * and a sequence, one by one or a few under ref_ring_hold() with a yield inside, which
 * sends the others past their spins to sleep. A lock that let two writers in would
 * interleave their bytes or lose a head update: every record must be found intact,
 * each writer's in order, and the head at the sum of their lengths. */
#define CW_THREADS 4
#define CW_RECORDS 3000u

struct cw_arg {
	struct ref_ring *ring;
	uint64_t who;
	int failed;
};

static void cw_record(uint64_t *rec, uint64_t who, uint64_t seq)
{
	rec[0] = PECS_RECORD_SAMPLE | 32ull << 48;
	rec[1] = who;
	rec[2] = seq;
	rec[3] = who * 0x9e3779b97f4a7c15ull ^ seq;
}

static void *cw_main(void *arg)
{
	struct cw_arg *a = arg;
	uint64_t rec[4], seq = 0;

	while (seq < CW_RECORDS) {
		int held = seq % 64 == a->who, n = held ? 8 : 1;

		if (held)
			ref_ring_hold(a->ring);
		for (; n-- && seq < CW_RECORDS; seq++) {
			cw_record(rec, a->who, seq);
			if (ref_ring_write(a->ring, rec, sizeof(rec)))
				a->failed = 1;
			if (held && n == 4)
				sched_yield();
		}
		if (held)
			ref_ring_release(a->ring);
	}
	return NULL;
}

static void test_contended_writers(void **state)
{
	struct cw_arg args[CW_THREADS];
	uint64_t next[CW_THREADS] = { 0 }, off, total = 0;
	pthread_t th[CW_THREADS];
	const uint8_t *data;
	struct ref_ring *r;
	void *p;
	int i;

	(void)state;
	/* 512 KiB holds all 384,000 bytes: nothing wraps or is lost. */
	assert_int_equal(ref_ring_create(&r, 1 + 128, 4096, 0), 0);
	assert_int_equal(ref_ring_map(r, PROT_READ | PROT_WRITE, &p), 0);
	for (i = 0; i < CW_THREADS; i++) {
		args[i] = (struct cw_arg){ .ring = r, .who = (uint64_t)i };
		assert_int_equal(pthread_create(&th[i], NULL, cw_main, &args[i]), 0);
	}
	for (i = 0; i < CW_THREADS; i++) {
		pthread_join(th[i], NULL);
		assert_false(args[i].failed);
	}
	data = (const uint8_t *)p + 4096;
	for (off = 0; off < ref_ring_head(r); off += 32) {
		uint64_t rec[4], want[4];

		memcpy(rec, data + off, sizeof(rec));
		assert_true(rec[1] < CW_THREADS);
		cw_record(want, rec[1], next[rec[1]]++);
		assert_memory_equal(rec, want, sizeof(rec));
		total++;
	}
	assert_int_equal(total, CW_THREADS * CW_RECORDS);
	assert_int_equal(ref_ring_head(r), total * 32);
	assert_int_equal(ref_ring_pending_lost(r), 0);
	ref_ring_unmap(r, p);
	ref_ring_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_ring_many_wraps),
		cmocka_unit_test(test_larger_ring),
		cmocka_unit_test(test_userpage_seqlock),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_contended_writers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
