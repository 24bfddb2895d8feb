/* The exec notes: what a process forked from an interposer's host writes just before it
 * executes a program, for an engine in the host that counts it from outside (ref's
 * enable_on_exec and remove_on_exec, ref/event/event_exec_moment.c). The interposer
 * (interpose/) keeps the board; ref reads it. Plain data, so neither depends on the
 * other's code. */
#ifndef PECS_EXEC_NOTE_H
#define PECS_EXEC_NOTE_H

/* What a process forked from the interposer's host notes just before it executes a
 * program, for an engine in the host that counts it from outside: the moment the kernel
 * turns enable_on_exec on (perf_event_exec()) lies inside execve, which no stop of a
 * tracer reaches before the new program is loaded. Its process CPU clock and faults then,
 * and the pages execve's copy of the strings faults in the new stack (which the kernel's
 * page-faults event never counts: get_user_pages()). The notes live in the page the
 * library maps shared at load, which a fork shares and an exec does not. */
struct pecs_exec_note {
	int pid;                      /* 0: free; written last, with release order */
	int pad;
	unsigned long long cpu_ns;    /* CLOCK_PROCESS_CPUTIME_ID */
	unsigned long long faults;    /* minor and major, as getrusage(RUSAGE_SELF) */
	unsigned long long arg_pages; /* pages of the path, argv and envp strings */
};
#define PECS_EXEC_NOTES 32
struct pecs_exec_board {
	struct pecs_exec_note note[PECS_EXEC_NOTES];
};
/* The board of the library an engine is linked with; undefined (a weak reference is
 * NULL) where there is no interposer. */
struct pecs_exec_board *pecs_interpose_exec_board(void);

#endif /* PECS_EXEC_NOTE_H */
