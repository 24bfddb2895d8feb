/* The C library's own entries behind the ones the interposer defines.
 *
 * dlsym(RTLD_NEXT) may allocate, so it runs once, in a constructor, before the program's
 * main; after that every pass-through call is a load and an indirect call. A library
 * whose constructor runs before ours and calls one of these entries resolves them early
 * (the same dlsym, on that thread, before any signal handler of the program exists). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>

#include "interpose/interpose.h"

static struct ip_real real;
static atomic_int resolved;

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void resolve(void)
{
	real.syscall = (long (*)(long, ...))next("syscall");
	real.ioctl = (int (*)(int, unsigned long, ...))next("ioctl");
	real.read = (ssize_t(*)(int, void *, size_t))next("read");
	real.read_chk = (ssize_t(*)(int, void *, size_t, size_t))next("__read_chk");
	real.close = (int (*)(int))next("close");
	real.dup = (int (*)(int))next("dup");
	real.dup2 = (int (*)(int, int))next("dup2");
	real.dup3 = (int (*)(int, int, int))next("dup3");
	real.fcntl = (int (*)(int, int, ...))next("fcntl");
	real.fcntl64 = (int (*)(int, int, ...))next("fcntl64");
	real.mmap = (void *(*)(void *, size_t, int, int, int, off_t))next("mmap");
	real.mmap64 = (void *(*)(void *, size_t, int, int, int, off_t))next("mmap64");
	real.munmap = (int (*)(void *, size_t))next("munmap");
	real.mremap = (void *(*)(void *, size_t, size_t, int, ...))next("mremap");
	real.poll = (int (*)(struct pollfd *, nfds_t, int))next("poll");
	real.ppoll = (int (*)(struct pollfd *, nfds_t, const struct timespec *,
			      const sigset_t *))next("ppoll");
	real.prctl = (int (*)(int, ...))next("prctl");
	real.getsid = (pid_t(*)(pid_t))next("getsid");
	real.getppid = (pid_t(*)(void))next("getppid");
	real.getpgid = (pid_t(*)(pid_t))next("getpgid");
	real.wait4 = (pid_t(*)(pid_t, int *, int, struct rusage *))next("wait4");
	real.waitid = (int (*)(idtype_t, id_t, siginfo_t *, int))next("waitid");
	real.execve = (int (*)(const char *, char *const[], char *const[]))next("execve");
	real.execvpe = (int (*)(const char *, char *const[], char *const[]))next("execvpe");
	real.execveat = (int (*)(int, const char *, char *const[], char *const[], int))next(
		"execveat");
	real.fexecve = (int (*)(int, char *const[], char *const[]))next("fexecve");
	real.posix_spawn = (int (*)(pid_t *, const char *, const void *, const void *,
				    char *const[], char *const[]))next("posix_spawn");
	real.posix_spawnp = (int (*)(pid_t *, const char *, const void *, const void *,
				     char *const[], char *const[]))next("posix_spawnp");
	/* A C library without fcntl64 or mmap64 (older glibc, musl) has one entry for both. */
	if (!real.fcntl64)
		real.fcntl64 = real.fcntl;
	if (!real.mmap64)
		real.mmap64 = real.mmap;
	atomic_store_explicit(&resolved, 1, memory_order_release);
}

__attribute__((constructor)) static void ip_real_init(void)
{
	if (!atomic_load_explicit(&resolved, memory_order_acquire))
		resolve();
}

const struct ip_real *ip_real(void)
{
	if (!atomic_load_explicit(&resolved, memory_order_acquire))
		resolve();
	return &real;
}
