/* System call names to numbers, for the syscalls:* tracepoints, which tracefs names by
 * the call (sys_enter_getsid) while a caller reports a call by its number.
 *
 * The names are those x86-64 glibc's <sys/syscall.h> defines as SYS_<name> (listed from
 * `cc -dM -E` of that header); the numbers come from that header at build time.
 * Elsewhere the table is empty and every syscall tracepoint opens but never fires
 * (docs/behaviours.md, Tracepoints). */
#define _GNU_SOURCE
#include <string.h>
#include <sys/syscall.h>

#include "ref/host/host.h"

struct entry {
	const char *name;
	int nr;
};

#define N(n) {#n, SYS_##n},

static const struct entry table[] = {
#if defined(__x86_64__)
	N(_sysctl) N(accept) N(accept4) N(access) N(acct) N(add_key) N(adjtimex)
	N(afs_syscall) N(alarm) N(arch_prctl) N(bind) N(bpf) N(brk) N(capget) N(capset)
	N(chdir) N(chmod) N(chown) N(chroot) N(clock_adjtime) N(clock_getres)
	N(clock_gettime) N(clock_nanosleep) N(clock_settime) N(clone) N(clone3) N(close)
	N(close_range) N(connect) N(copy_file_range) N(creat) N(create_module)
	N(delete_module) N(dup) N(dup2) N(dup3) N(epoll_create) N(epoll_create1)
	N(epoll_ctl) N(epoll_ctl_old) N(epoll_pwait) N(epoll_pwait2) N(epoll_wait)
	N(epoll_wait_old) N(eventfd) N(eventfd2) N(execve) N(execveat) N(exit)
	N(exit_group) N(faccessat) N(faccessat2) N(fadvise64) N(fallocate) N(fanotify_init)
	N(fanotify_mark) N(fchdir) N(fchmod) N(fchmodat) N(fchown) N(fchownat) N(fcntl)
	N(fdatasync) N(fgetxattr) N(finit_module) N(flistxattr) N(flock) N(fork)
	N(fremovexattr) N(fsconfig) N(fsetxattr) N(fsmount) N(fsopen) N(fspick) N(fstat)
	N(fstatfs) N(fsync) N(ftruncate) N(futex) N(futex_waitv) N(futimesat)
	N(get_kernel_syms) N(get_mempolicy) N(get_robust_list) N(get_thread_area) N(getcpu)
	N(getcwd) N(getdents) N(getdents64) N(getegid) N(geteuid) N(getgid) N(getgroups)
	N(getitimer) N(getpeername) N(getpgid) N(getpgrp) N(getpid) N(getpmsg) N(getppid)
	N(getpriority) N(getrandom) N(getresgid) N(getresuid) N(getrlimit) N(getrusage)
	N(getsid) N(getsockname) N(getsockopt) N(gettid) N(gettimeofday) N(getuid)
	N(getxattr) N(init_module) N(inotify_add_watch) N(inotify_init) N(inotify_init1)
	N(inotify_rm_watch) N(io_cancel) N(io_destroy) N(io_getevents) N(io_pgetevents)
	N(io_setup) N(io_submit) N(io_uring_enter) N(io_uring_register) N(io_uring_setup)
	N(ioctl) N(ioperm) N(iopl) N(ioprio_get) N(ioprio_set) N(kcmp) N(kexec_file_load)
	N(kexec_load) N(keyctl) N(kill) N(landlock_add_rule) N(landlock_create_ruleset)
	N(landlock_restrict_self) N(lchown) N(lgetxattr) N(link) N(linkat) N(listen)
	N(listxattr) N(llistxattr) N(lookup_dcookie) N(lremovexattr) N(lseek) N(lsetxattr)
	N(lstat) N(madvise) N(mbind) N(membarrier) N(memfd_create) N(memfd_secret)
	N(migrate_pages) N(mincore) N(mkdir) N(mkdirat) N(mknod) N(mknodat) N(mlock)
	N(mlock2) N(mlockall) N(mmap) N(modify_ldt) N(mount) N(mount_setattr) N(move_mount)
	N(move_pages) N(mprotect) N(mq_getsetattr) N(mq_notify) N(mq_open)
	N(mq_timedreceive) N(mq_timedsend) N(mq_unlink) N(mremap) N(msgctl) N(msgget)
	N(msgrcv) N(msgsnd) N(msync) N(munlock) N(munlockall) N(munmap)
	N(name_to_handle_at) N(nanosleep) N(newfstatat) N(nfsservctl) N(open)
	N(open_by_handle_at) N(open_tree) N(openat) N(openat2) N(pause) N(perf_event_open)
	N(personality) N(pidfd_getfd) N(pidfd_open) N(pidfd_send_signal) N(pipe) N(pipe2)
	N(pivot_root) N(pkey_alloc) N(pkey_free) N(pkey_mprotect) N(poll) N(ppoll) N(prctl)
	N(pread64) N(preadv) N(preadv2) N(prlimit64) N(process_madvise) N(process_mrelease)
	N(process_vm_readv) N(process_vm_writev) N(pselect6) N(ptrace) N(putpmsg)
	N(pwrite64) N(pwritev) N(pwritev2) N(query_module) N(quotactl) N(quotactl_fd)
	N(read) N(readahead) N(readlink) N(readlinkat) N(readv) N(reboot) N(recvfrom)
	N(recvmmsg) N(recvmsg) N(remap_file_pages) N(removexattr) N(rename) N(renameat)
	N(renameat2) N(request_key) N(restart_syscall) N(rmdir) N(rseq) N(rt_sigaction)
	N(rt_sigpending) N(rt_sigprocmask) N(rt_sigqueueinfo) N(rt_sigreturn)
	N(rt_sigsuspend) N(rt_sigtimedwait) N(rt_tgsigqueueinfo) N(sched_get_priority_max)
	N(sched_get_priority_min) N(sched_getaffinity) N(sched_getattr) N(sched_getparam)
	N(sched_getscheduler) N(sched_rr_get_interval) N(sched_setaffinity)
	N(sched_setattr) N(sched_setparam) N(sched_setscheduler) N(sched_yield) N(seccomp)
	N(security) N(select) N(semctl) N(semget) N(semop) N(semtimedop) N(sendfile)
	N(sendmmsg) N(sendmsg) N(sendto) N(set_mempolicy) N(set_mempolicy_home_node)
	N(set_robust_list) N(set_thread_area) N(set_tid_address) N(setdomainname)
	N(setfsgid) N(setfsuid) N(setgid) N(setgroups) N(sethostname) N(setitimer) N(setns)
	N(setpgid) N(setpriority) N(setregid) N(setresgid) N(setresuid) N(setreuid)
	N(setrlimit) N(setsid) N(setsockopt) N(settimeofday) N(setuid) N(setxattr) N(shmat)
	N(shmctl) N(shmdt) N(shmget) N(shutdown) N(sigaltstack) N(signalfd) N(signalfd4)
	N(socket) N(socketpair) N(splice) N(stat) N(statfs) N(statx) N(swapoff) N(swapon)
	N(symlink) N(symlinkat) N(sync) N(sync_file_range) N(syncfs) N(sysfs) N(sysinfo)
	N(syslog) N(tee) N(tgkill) N(time) N(timer_create) N(timer_delete)
	N(timer_getoverrun) N(timer_gettime) N(timer_settime) N(timerfd_create)
	N(timerfd_gettime) N(timerfd_settime) N(times) N(tkill) N(truncate) N(tuxcall)
	N(umask) N(umount2) N(uname) N(unlink) N(unlinkat) N(unshare) N(uselib)
	N(userfaultfd) N(ustat) N(utime) N(utimensat) N(utimes) N(vfork) N(vhangup)
	N(vmsplice) N(vserver) N(wait4) N(waitid) N(write) N(writev)
#endif
	{"", -1},
};

/* Tracefs names a few calls by their kernel function, not by the libc name. */
static const char *const alias[][2] = {
	{"newstat", "stat"}, {"newfstat", "fstat"}, {"newlstat", "lstat"},
	{"newuname", "uname"}, {"sendfile64", "sendfile"}, {"umount", "umount2"},
};

static int lookup(const char *name)
{
	for (size_t i = 0; i + 1 < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, name) == 0)
			return table[i].nr;
	return -1;
}

int ref_host_syscall_nr(const char *name)
{
	int nr = lookup(name);

	for (size_t i = 0; nr < 0 && i < sizeof(alias) / sizeof(alias[0]); i++)
		if (strcmp(alias[i][0], name) == 0)
			nr = lookup(alias[i][1]);
	return nr;
}
