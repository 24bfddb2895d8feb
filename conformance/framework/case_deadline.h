/* The per-case time limit of an isolated case, and when it may wait longer. */
#ifndef PECS_FRAMEWORK_CASE_DEADLINE_H
#define PECS_FRAMEWORK_CASE_DEADLINE_H

#include <stdint.h>

/* How many more limits a case may get while the CPUs were saturated: a hang on a
 * saturated machine is killed after (1 + CASE_DEADLINE_PATIENCE) limits at most. */
#define CASE_DEADLINE_PATIENCE 3

struct case_deadline {
	double at_ms;	      /* CLOCK_MONOTONIC */
	double limit_ms;
	int extended;	      /* how many more limits were given */
	int64_t stall_us;     /* the pressure file's "some" total when last set; -1 unknown */
	const char *pressure; /* /proc/pressure/cpu; tests name a file of their own */
};

double case_deadline_now_ms(void);
/* limit_s 0 means 60 s; pressure NULL means /proc/pressure/cpu. */
void case_deadline_start(struct case_deadline *d, unsigned limit_s, const char *pressure);
/* Milliseconds left, at least 0. */
int case_deadline_left_ms(const struct case_deadline *d);
/* At the limit: 1 when the case is late for good; 0 when the CPUs were saturated for at
 * least half of the last limit, and the limit starts again. */
int case_deadline_expired(struct case_deadline *d);

#endif
