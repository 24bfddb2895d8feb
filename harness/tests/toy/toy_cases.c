/* A small, fixed suite for the harness's own tests: one case per verdict, so the tests
 * know exactly what each run must report. Runs against the syscall adapter. */
#include <stddef.h>

#include "pecs/case.h"

PECS_CASE("Required.Toy.Open.TaskClock", "counting", "TOY-OPEN")
{
	struct pecs_attr a;
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	PECS_OPEN(t, &a, 0, -1, -1, 0);
}

PECS_CASE("Required.Toy.Open.BadType", "", "TOY-OPEN,TOY-BAD-TYPE")
{
	struct pecs_attr a;
	pecs_attr_counting(t, &a, PECS_SW_TASK_CLOCK);
	a.type = 1000; /* no PMU has this type: linux-abi.md */
	PECS_CHECK_ERR(t, pecs_open(t, &a, 0, -1, -1, 0), ENOENT);
}

PECS_CASE("Required.Toy.Verdict.Fails", "", "TOY-FAIL")
{
	int two = 2;
	PECS_CHECK_EQ(t, two, 3);
}

PECS_CASE("Required.Toy.Verdict.Crashes", "", "TOY-CRASH")
{
	(void)t;
	volatile int *volatile nowhere = NULL; /* volatile both ways: the store must happen */
	*nowhere = 1;
}

PECS_CASE("Required.Toy.Verdict.Broken", "", "TOY-BROKEN")
{
	PECS_BROKEN(t, "setup failed on purpose");
}

PECS_CASE("Required.Toy.Verdict.EnvSkip", "", "TOY-ENV")
{
	PECS_ENV_SKIP(t, "the host cannot run this, on purpose");
}

PECS_CASE("Recommended.Toy.Replay.NotClaimed", "profiler.replay", "TOY-REPLAY")
{
	PECS_UNSUPPORTED(t, "no profiler seam");
}
