/* Whether a program the interposer's host executes gets the interposer too.
 *
 * A wrapper (timeout, nice, strace -f, sh -c) stands between LD_PRELOAD and the program
 * that opens events; the interposer must reach that program, or it would measure the
 * kernel without a word. So the library stays in LD_PRELOAD by default, and leaves it
 * only for what is executed by a process that opened an event through it, or by a child
 * forked from one (perf forks its workload before it opens the workload's events, and the
 * child executes it after). There it leaves, because loading the library and the engine's
 * dependencies into the measured workload costs that workload about 80 page faults the
 * kernel does not count for it (measured on a run of sh). PECS_INTERPOSE_CHILDREN=1 keeps
 * it in everywhere, for a host whose children open events of their own.
 *
 * "Opened an event" is one flag in a shared anonymous page mapped at load: a fork shares
 * it with its parent, so the flag the host sets after the fork reaches the waiting child;
 * an exec maps a fresh page, so a program starts with the flag clear. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "interpose/interpose.h"
#include "pecs/interpose.h"

/* The page shared with the children forked from here: the flag, then the exec notes. */
struct shared {
	atomic_int opened;
	struct pecs_exec_board board;
};

static atomic_int local_flag;
static atomic_int *opened = &local_flag;
static struct pecs_exec_board *board;
static int keep;
static char me[4096];

__attribute__((constructor)) static void ip_env_init(void)
{
	const char *k = getenv(PECS_INTERPOSE_CHILDREN_ENV);
	Dl_info info;
	struct shared *page = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	keep = k && strcmp(k, "1") == 0;
	/* Without the shared page the flag is this process's own: its children forked
	 * before its first open then keep the library. */
	if (page != MAP_FAILED) {
		opened = &page->opened;
		board = &page->board;
	}
	if (dladdr((void *)ip_env_init, &info) && info.dli_fname &&
	    strlen(info.dli_fname) < sizeof(me))
		strcpy(me, info.dli_fname);
}

struct pecs_exec_board *pecs_interpose_exec_board(void)
{
	return board;
}

void ip_env_opened(void)
{
	atomic_store_explicit(opened, 1, memory_order_release);
}

/* 1 when the entry of length len names the object at path: the same path, or the same
 * file name. */
static int names_me(const char *entry, size_t len, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strlen(path) == len && strncmp(entry, path, len) == 0)
		return 1;
	size_t blen = strlen(base);

	return len >= blen && strncmp(entry + len - blen, base, blen) == 0 &&
	       (len == blen || entry[len - blen - 1] == '/');
}

static const char preload[] = "LD_PRELOAD=";

/* The LD_PRELOAD entry of envp that names this library, or NULL. */
static const char *my_preload(char *const *envp)
{
	size_t plen = sizeof(preload) - 1;

	for (; *envp; envp++) {
		if (strncmp(*envp, preload, plen) != 0)
			continue;
		/* LD_PRELOAD separates its entries with spaces or colons. */
		for (const char *p = *envp + plen; *p;) {
			size_t len = strcspn(p, " :");

			if (len && names_me(p, len, me))
				return *envp;
			p += len;
			p += *p != 0;
		}
		return NULL;
	}
	return NULL;
}

size_t ip_env_slots(char *const *envp)
{
	size_t n = 0;

	if (!envp || keep || !me[0] || !atomic_load_explicit(opened, memory_order_acquire) ||
	    !my_preload(envp))
		return 1;
	while (envp[n])
		n++;
	/* The copy lives on the caller's stack; an environment too large for that keeps
	 * the library rather than fail the exec. */
	return n < IP_ENV_MAX_SLOTS ? n + 1 : 1;
}

char *const *ip_env_child(char *const *envp, char **slots, size_t nslots, char *entry)
{
	const char *pre = nslots > 1 ? my_preload(envp) : NULL;
	size_t n = 0, at = sizeof(preload) - 1;

	if (!pre || strlen(pre) >= IP_ENV_ENTRY_MAX)
		return envp;
	memcpy(entry, preload, at);
	for (const char *p = pre + at; *p;) {
		size_t len = strcspn(p, " :");

		if (len && !names_me(p, len, me)) {
			if (at > sizeof(preload) - 1)
				entry[at++] = ' ';
			memcpy(entry + at, p, len);
			at += len;
		}
		p += len;
		p += *p != 0;
	}
	entry[at] = 0;
	for (; *envp && n + 1 < nslots; envp++) {
		if (*envp != pre)
			slots[n++] = *envp;
		else if (at > sizeof(preload) - 1)
			slots[n++] = entry;
	}
	slots[n] = NULL;
	return slots;
}

static unsigned long long strings_bytes(char *const *v)
{
	unsigned long long n = 0;

	for (; v && *v; v++)
		n += strlen(*v) + 1;
	return n;
}

/* This process's slot: its own from an earlier exec that failed, else a free one, else
 * one by its pid (a note no engine took is stale). */
static struct pecs_exec_note *note_slot(struct pecs_exec_board *b, int pid)
{
	struct pecs_exec_note *free_one = NULL;

	for (int i = 0; i < PECS_EXEC_NOTES; i++) {
		int p = __atomic_load_n(&b->note[i].pid, __ATOMIC_ACQUIRE);

		if (p == pid)
			return &b->note[i];
		if (!p && !free_one)
			free_one = &b->note[i];
	}
	return free_one ? free_one : &b->note[(unsigned)pid % PECS_EXEC_NOTES];
}

void ip_env_note_exec(const char *path, char *const *argv, char *const *envp)
{
	struct pecs_exec_note *n;
	struct timespec ts;
	struct rusage ru;
	int pid;

	if (!board || !atomic_load_explicit(opened, memory_order_acquire))
		return;
	pid = getpid();
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) || getrusage(RUSAGE_SELF, &ru))
		return;
	n = note_slot(board, pid);
	__atomic_store_n(&n->pid, 0, __ATOMIC_RELEASE);
	n->cpu_ns = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
	n->faults = (unsigned long long)ru.ru_minflt + (unsigned long long)ru.ru_majflt;
	/* bprm_execve() copies them below the new stack's top, past one pointer's room. */
	n->arg_pages = (strlen(path ? path : "") + 1 + strings_bytes(argv) + strings_bytes(envp) +
			sizeof(void *) + 4095) / 4096;
	__atomic_store_n(&n->pid, pid, __ATOMIC_RELEASE);
}
