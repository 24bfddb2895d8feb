#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pecs/toolkit/signal.h"

struct kept {
	int signo;
	struct sigaction old;
};

static void restore(void *arg)
{
	struct kept *k = arg;

	sigaction(k->signo, &k->old, NULL);
	free(k);
}

void pecs_catch_signal(struct pecs_t *t, int signo, void (*handler)(int, siginfo_t *, void *))
{
	struct kept *k = malloc(sizeof(*k));
	struct sigaction sa;

	if (!k)
		PECS_BROKEN(t, "no memory to keep signal %d's action", signo);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	k->signo = signo;
	if (sigaction(signo, &sa, &k->old) < 0) {
		int err = errno;

		free(k);
		PECS_BROKEN(t, "sigaction(%d): %s", signo, strerror(err));
	}
	pecs_defer(t, restore, k);
}
