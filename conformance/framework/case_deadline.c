/* A case's time limit that follows the machine, not the wall clock alone.
 *
 * A limit exists to catch hangs. On a machine whose CPUs are oversubscribed (two busy
 * loops on two cores, a sanitizer build, a testee behind a pipe that is itself waiting
 * for a CPU) a correct case can spend its whole limit waiting to run. Linux's pressure
 * stall information says how long runnable tasks waited for a CPU: when that was at least
 * half of the limit, the limit is given again, a bounded number of times. A hang on an
 * idle machine is still caught at the first limit; without /proc/pressure/cpu (kernels
 * without CONFIG_PSI, some emulators) the first limit is final, as it always was. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "case_deadline.h"

double case_deadline_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The "some" line's total: microseconds in which at least one runnable task waited. */
static int64_t cpu_stall_us(const char *pressure)
{
	char buf[256];
	int fd = open(pressure, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *total = strstr(buf, "total=");
	if (strncmp(buf, "some ", 5) != 0 || !total)
		return -1;
	return strtoll(total + 6, NULL, 10);
}

void case_deadline_start(struct case_deadline *d, unsigned limit_s, const char *pressure)
{
	d->pressure = pressure ? pressure : "/proc/pressure/cpu";
	d->limit_ms = (limit_s ? limit_s : 60) * 1000.0;
	d->at_ms = case_deadline_now_ms() + d->limit_ms;
	d->extended = 0;
	d->stall_us = cpu_stall_us(d->pressure);
}

int case_deadline_left_ms(const struct case_deadline *d)
{
	double left = d->at_ms - case_deadline_now_ms();
	return left > 0 ? (int)left + 1 : 0;
}

int case_deadline_expired(struct case_deadline *d)
{
	if (case_deadline_left_ms(d) > 0)
		return 0;
	int64_t stall = cpu_stall_us(d->pressure);
	if (d->extended >= CASE_DEADLINE_PATIENCE || stall < 0 || d->stall_us < 0 ||
	    (double)(stall - d->stall_us) < d->limit_ms * 1000.0 / 2)
		return 1;
	d->extended++;
	d->stall_us = stall;
	d->at_ms = case_deadline_now_ms() + d->limit_ms;
	return 0;
}
