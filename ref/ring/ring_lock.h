/* The ring's write lock: one atomic exchange to take it, a release store to drop it.
 * A pthread mutex costs two atomic read-modify-writes a write (its unlock swaps the
 * word to learn whether to wake anyone); a 64-byte record's copy costs about as much as
 * one. Here the unlock stores, then looks at a count of sleepers, so an uncontended
 * write pays one. Contended, a taker spins briefly, then sleeps on a futex. Internal to
 * ref/ring. */
#ifndef REF_RING_LOCK_H
#define REF_RING_LOCK_H

struct ring_lock {
	int word;     /* 0 free, 1 taken */
	int sleepers; /* takers counted before they sleep on word */
};

void ref_ring_lock_wait(struct ring_lock *l);
void ref_ring_lock_wake(struct ring_lock *l);

static inline void ring_lock_take(struct ring_lock *l)
{
	if (__atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE))
		ref_ring_lock_wait(l);
}

static inline void ring_lock_drop(struct ring_lock *l)
{
	__atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
	/* Nothing orders the store before the load (that would cost the atomic operation
	 * saved): a taker that counts itself just as the word is freed can miss both the
	 * free word and the wake. It sleeps with a timeout for that (ring_lock.c). */
	if (__atomic_load_n(&l->sleepers, __ATOMIC_RELAXED))
		ref_ring_lock_wake(l);
}

#endif /* REF_RING_LOCK_H */
