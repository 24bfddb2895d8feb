/* Naming the call behind a failed check. A case often keeps a call's answer in a variable
 * and checks it later (`fd = pecs_open(...); PECS_CHECK_OK(t, fd)`), and the check's text
 * is then only the variable: "fd failed: -ENOSYS". The case's last call into the
 * implementation is what answered, when its answer is the value checked; and a negative
 * value it answered is an errno, printed as one ("-ENOTTY", not "-25"). */
#include <stdio.h>
#include <string.h>

#include "case_context.h"

static const struct {
	unsigned long request;
	const char *name;
} ioctl_names[] = {
	{PECS_IOC_ENABLE, "PERF_EVENT_IOC_ENABLE"},
	{PECS_IOC_DISABLE, "PERF_EVENT_IOC_DISABLE"},
	{PECS_IOC_REFRESH, "PERF_EVENT_IOC_REFRESH"},
	{PECS_IOC_RESET, "PERF_EVENT_IOC_RESET"},
	{PECS_IOC_PERIOD, "PERF_EVENT_IOC_PERIOD"},
	{PECS_IOC_SET_OUTPUT, "PERF_EVENT_IOC_SET_OUTPUT"},
	{PECS_IOC_SET_FILTER, "PERF_EVENT_IOC_SET_FILTER"},
	{PECS_IOC_ID, "PERF_EVENT_IOC_ID"},
	{PECS_IOC_SET_BPF, "PERF_EVENT_IOC_SET_BPF"},
	{PECS_IOC_PAUSE_OUTPUT, "PERF_EVENT_IOC_PAUSE_OUTPUT"},
	{PECS_IOC_QUERY_BPF, "PERF_EVENT_IOC_QUERY_BPF"},
	{PECS_IOC_MODIFY_ATTRIBUTES, "PERF_EVENT_IOC_MODIFY_ATTRIBUTES"},
};

/* The wrappers a case calls directly: a check on one of them already names its call. */
static const char *const wrappers[] = {
	"pecs_open(", "pecs_close(", "pecs_read(", "pecs_write(", "pecs_ioctl(",
	"pecs_mmap(", "pecs_munmap(", "pecs_poll(",
};

void pecs_note_call(struct pecs_t *t, enum pecs_entry entry, long ret, unsigned long request)
{
	pecs_tally_add(&t->calls[entry], ret);
	t->last.entry = entry;
	t->last.ret = ret;
	t->last.request = request;
	t->last.made = 1;
}

static void call_name(const struct pecs_t *t, char *buf, size_t len)
{
	if (t->last.entry == PECS_ENTRY_OPEN) {
		snprintf(buf, len, "perf_event_open");
		return;
	}
	if (t->last.entry != PECS_ENTRY_IOCTL) {
		snprintf(buf, len, "%s", pecs_entry_name(t->last.entry));
		return;
	}
	/* The kernel matches the request as a u32 (a case may set the upper half). */
	unsigned long request = t->last.request & 0xffffffffu;
	for (size_t i = 0; i < sizeof(ioctl_names) / sizeof(ioctl_names[0]); i++) {
		if (ioctl_names[i].request == request) {
			snprintf(buf, len, "ioctl %s", ioctl_names[i].name);
			return;
		}
	}
	snprintf(buf, len, "ioctl %#lx", t->last.request);
}

/* Whether text is a plain value (a variable, a field, an element), not an expression. */
static int plain_value(const char *text)
{
	if (!*text)
		return 0;
	for (const char *p = text; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.[]->", *p))
			return 0;
	return 1;
}

const char *pecs_call_text(struct pecs_t *t, const char *text, long long ret)
{
	static __thread char buf[2][384];
	static __thread unsigned slot;
	char call[64];

	if (ret >= 0 || !t->last.made || (long long)t->last.ret != ret)
		return text;
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (strncmp(text, wrappers[i], strlen(wrappers[i])) == 0)
			return text;
	char *b = buf[slot++ % 2];
	call_name(t, call, sizeof(call));
	if (plain_value(text))
		snprintf(b, sizeof(buf[0]), "%s (%s)", call, text);
	else
		snprintf(b, sizeof(buf[0]), "%s via %s", text, call);
	return b;
}

const char *pecs_value_text(struct pecs_t *t, long long v)
{
	static __thread char buf[2][64];
	static __thread unsigned slot;
	char *b = buf[slot++ % 2];

	if (v < 0 && v > -4096 && t->last.made && (long long)t->last.ret == v)
		snprintf(b, sizeof(buf[0]), "-%s (%lld)", pecs_errname((int)-v), v);
	else
		snprintf(b, sizeof(buf[0]), "%lld (0x%llx)", v, (unsigned long long)v);
	return b;
}
