/* Classes of differences: what was called, what each side answered, and which of the
 * call's inputs still differ from the plainest open once the reproducer is minimized.
 * Two differences with one cause end up with one key; the key is plain text so that
 * docs/behaviours.md can name a class with an fnmatch(3) pattern. */
#include <stdio.h>
#include <string.h>

#include "conformance/differential/diff.h"

static const char *const flag_names[38] = {
	"disabled", "inherit", "pinned", "exclusive", "exclude_user", "exclude_kernel",
	"exclude_hv", "exclude_idle", "mmap", "comm", "freq", "inherit_stat",
	"enable_on_exec", "task", "watermark", "precise_ip", "precise_ip", "mmap_data",
	"sample_id_all", "exclude_host", "exclude_guest", "exclude_callchain_kernel",
	"exclude_callchain_user", "mmap2", "comm_exec", "use_clockid", "context_switch",
	"write_backward", "namespaces", "ksymbol", "bpf_event", "aux_output", "cgroup",
	"text_poke", "build_id", "inherit_thread", "remove_on_exec", "sigtrap",
};

static void add(char *buf, size_t len, const char *what)
{
	size_t used = strlen(buf);
	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s%s", used && buf[used - 1] != '=' ? "," : "",
			 what);
}

static const struct diff_call *open_of(const struct diff_seq *s, int id)
{
	for (int i = 0; i < s->n; i++)
		if (s->calls[i].op == DIFF_OPEN && s->calls[i].id == id)
			return &s->calls[i];
	return NULL;
}

/* The inputs of an open that are not the plainest ones. */
static void open_fields(const struct diff_call *c, char *buf, size_t len)
{
	const struct pecs_attr *a = &c->attr;
	char tmp[48];
	if (a->type != PECS_TYPE_SOFTWARE) {
		snprintf(tmp, sizeof(tmp), "type%u", a->type);
		add(buf, len, tmp);
	}
	if (a->size != PECS_ATTR_SIZE_LATEST || c->tail_byte)
		add(buf, len, "size");
	if (a->config) {
		snprintf(tmp, sizeof(tmp), "config%llu", (unsigned long long)a->config);
		add(buf, len, tmp);
	}
	for (int b = 0; b < 64; b++)
		if (a->flags & (1ull << b)) {
			snprintf(tmp, sizeof(tmp), "%s", b < 38 ? flag_names[b] : "reserved");
			if (!strstr(buf, tmp))
				add(buf, len, tmp);
		}
#define FIELD(name) \
	if (a->name) \
		add(buf, len, #name)
	FIELD(sample_period); FIELD(sample_type); FIELD(read_format); FIELD(wakeup_events);
	FIELD(bp_type); FIELD(config1); FIELD(config2); FIELD(branch_sample_type);
	FIELD(sample_regs_user); FIELD(sample_stack_user); FIELD(clockid);
	FIELD(sample_regs_intr); FIELD(aux_watermark); FIELD(sample_max_stack);
	FIELD(aux_sample_size); FIELD(aux_action); FIELD(sig_data); FIELD(config3);
#undef FIELD
	if (c->pid != PID_SELF)
		add(buf, len, c->pid == PID_TID ? "pid=tid" : "pid=-1");
	if (c->cpu >= 0)
		add(buf, len, c->cpu == 0 ? "cpu=0" : "cpu=own");
	if (c->group != DIFF_NO_REF)
		add(buf, len, c->group == DIFF_BAD_REF ? "group=badfd" : "group");
	/* A cgroup event is counted per CPU, which the engine's counters tell apart. */
	if (c->flags & PECS_FLAG_PID_CGROUP)
		add(buf, len, "pid_cgroup");
	if (c->flags & ~(unsigned long)PECS_FLAG_PID_CGROUP)
		add(buf, len, "open_flags");
}

void diff_raw_key(const struct diff_seq *s, int at, const struct diff_run *a,
		  const struct diff_run *b, char *buf, size_t len)
{
	char ka[120], kb[120];
	diff_answer(s, at, &a->out[at], ka, sizeof(ka));
	diff_answer(s, at, &b->out[at], kb, sizeof(kb));
	snprintf(buf, len, "%s|kernel=%s|impl=%s", diff_op_name(&s->calls[at]), ka, kb);
}

void diff_class_key(const struct diff_seq *s, int at, const struct diff_run *a,
		    const struct diff_run *b, char *buf, size_t len)
{
	const struct diff_call *c = &s->calls[at];
	char fields[200] = "attr=";
	diff_raw_key(s, at, a, b, buf, len);
	const struct diff_call *o = c->op == DIFF_OPEN ? c : open_of(s, c->ref);
	if (o)
		open_fields(o, fields, sizeof(fields));
	else
		add(fields, sizeof(fields), "badfd");
	size_t used = strlen(buf);
	snprintf(buf + used, len - used, "|%s", fields);
}
