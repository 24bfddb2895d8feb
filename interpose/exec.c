/* The C library's ways to execute a program, each given the environment env.c decides
 * on: the same one, or, after this process opened an event, one without the interposer in
 * LD_PRELOAD. The C library's own exec family calls its internal execve, which no
 * preloaded library can replace, so each entry is defined here. system() and popen()
 * are not: a host that runs one after opening an event gives that child the library.
 * Each notes, just before the real call, the process's CPU clock and faults for an engine
 * in the host that counts it from outside (ip_env_note_exec(): where inside the exec its
 * enable_on_exec events turn on). posix_spawn's child runs no code of ours: not noted. */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <unistd.h>

#include "interpose/interpose.h"

extern char **environ;

/* The environment for envp, in storage on the caller's stack: no allocation, so it is
 * safe in a child of vfork. */
#define CHILD_ENV(envp, env)                                                        \
	size_t env##_n = ip_env_slots(envp);                                        \
	char *env##_slots[env##_n];                                                 \
	char env##_entry[IP_ENV_ENTRY_MAX];                                         \
	char *const *env = ip_env_child(envp, env##_slots, env##_n, env##_entry)

int execve(const char *path, char *const argv[], char *const envp[])
{
	CHILD_ENV(envp, env);
	ip_env_note_exec(path, argv, env);
	return ip_real()->execve(path, argv, env);
}

int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	CHILD_ENV(envp, env);
	ip_env_note_exec(file, argv, env);
	return ip_real()->execvpe(file, argv, env);
}

int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	CHILD_ENV(envp, env);
	if (!ip_real()->execveat) {
		errno = ENOSYS;
		return -1;
	}
	ip_env_note_exec(path, argv, env);
	return ip_real()->execveat(dirfd, path, argv, env, flags);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	CHILD_ENV(envp, env);
	ip_env_note_exec(NULL, argv, env);
	return ip_real()->fexecve(fd, argv, env);
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
		const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	CHILD_ENV(envp, env);
	return ip_real()->posix_spawn(pid, path, actions, attr, argv, env);
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	CHILD_ENV(envp, env);
	return ip_real()->posix_spawnp(pid, file, actions, attr, argv, env);
}

/* execl and its kin: the variadic list as an argv (up to the NULL that ends it) and, for
 * execle, the envp after that NULL. */
static size_t arg_count(const char *arg, va_list ap)
{
	size_t n = 1;

	while (arg && va_arg(ap, const char *))
		n++;
	return arg ? n + 1 : 1;
}

#define VA_ARGV(arg, argv)                                                          \
	va_list ap;                                                                 \
	va_start(ap, arg);                                                          \
	size_t argv##_n = arg_count(arg, ap);                                       \
	va_end(ap);                                                                 \
	char *argv[argv##_n];                                                       \
	va_start(ap, arg);                                                          \
	argv[0] = (char *)arg;                                                      \
	for (size_t i = 1; i < argv##_n; i++)                                       \
		argv[i] = va_arg(ap, char *)

int execl(const char *path, const char *arg, ...)
{
	VA_ARGV(arg, argv);
	va_end(ap);
	return execve(path, argv, environ);
}

int execlp(const char *file, const char *arg, ...)
{
	VA_ARGV(arg, argv);
	va_end(ap);
	return execvpe(file, argv, environ);
}

int execle(const char *path, const char *arg, ...)
{
	VA_ARGV(arg, argv);
	char *const *envp = va_arg(ap, char *const *);

	va_end(ap);
	return execve(path, argv, envp);
}
