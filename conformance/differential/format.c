/* Names and printing: a call as C-like text for reproducers, and JSON strings. */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "conformance/differential/diff.h"

static const struct {
	unsigned long request;
	const char *name;
} requests[] = {
	{PECS_IOC_ENABLE, "ENABLE"}, {PECS_IOC_DISABLE, "DISABLE"}, {PECS_IOC_RESET, "RESET"},
	{PECS_IOC_REFRESH, "REFRESH"}, {PECS_IOC_PERIOD, "PERIOD"}, {PECS_IOC_ID, "ID"},
	{PECS_IOC_SET_OUTPUT, "SET_OUTPUT"}, {PECS_IOC_PAUSE_OUTPUT, "PAUSE_OUTPUT"},
	{PECS_IOC_MODIFY_ATTRIBUTES, "MODIFY_ATTRIBUTES"}, {PECS_IOC_SET_FILTER, "SET_FILTER"},
	{PECS_IOC_QUERY_BPF, "QUERY_BPF"}, {FIONBIO, "FIONBIO"}, {FIOCLEX, "FIOCLEX"},
	{FIONCLEX, "FIONCLEX"}, {FIOASYNC, "FIOASYNC"}, {FIONREAD, "FIONREAD"},
	{0x2499ul, "0x2499"}, {FIGETBSZ, "FIGETBSZ"}, {FIFREEZE, "FIFREEZE"},
	{FITHAW, "FITHAW"}, {FS_IOC_FIEMAP, "FS_IOC_FIEMAP"}, {FIOQSIZE, "FIOQSIZE"},
};

const char *diff_op_name(const struct diff_call *c)
{
	switch (c->op) {
	case DIFF_OPEN: return "open";
	case DIFF_CLOSE: return "close";
	case DIFF_READ: return "read";
	case DIFF_MMAP: return "mmap";
	case DIFF_POLL: return "poll";
	case DIFF_IOCTL:
		for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
			if (requests[i].request == c->request)
				return requests[i].name;
		return "ioctl";
	}
	return "?";
}

static void print_ref(FILE *f, int ref)
{
	if (ref == DIFF_NO_REF)
		fprintf(f, "-1");
	else if (ref == DIFF_BAD_REF)
		fprintf(f, "badfd");
	else
		fprintf(f, "fd%d", ref);
}

static void print_attr(FILE *f, const struct diff_call *c)
{
	const struct pecs_attr *a = &c->attr;
	fprintf(f, "{type=%u size=%u config=%llu", a->type, a->size,
		(unsigned long long)a->config);
#define FIELD(name) \
	if (a->name) \
		fprintf(f, " " #name "=%#llx", (unsigned long long)a->name)
	FIELD(sample_period); FIELD(sample_type); FIELD(read_format); FIELD(flags);
	FIELD(wakeup_events); FIELD(bp_type); FIELD(config1); FIELD(config2);
	FIELD(branch_sample_type); FIELD(sample_regs_user); FIELD(sample_stack_user);
	FIELD(clockid); FIELD(sample_regs_intr); FIELD(aux_watermark); FIELD(sample_max_stack);
	FIELD(aux_sample_size); FIELD(aux_action); FIELD(sig_data); FIELD(config3);
#undef FIELD
	if (c->tail_byte)
		fprintf(f, " byte[size-1]=1");
	fprintf(f, "}");
}

void diff_print_call(FILE *f, const struct diff_call *c)
{
	static const char *const pids[] = {"0", "gettid()", "-1"};
	switch (c->op) {
	case DIFF_OPEN:
		fprintf(f, "fd%d = perf_event_open(", c->id);
		print_attr(f, c);
		fprintf(f, ", pid=%s, cpu=%d, group=", pids[c->pid], c->cpu);
		print_ref(f, c->group);
		fprintf(f, ", flags=%#lx)", c->flags);
		return;
	case DIFF_IOCTL:
		fprintf(f, "ioctl(");
		print_ref(f, c->ref);
		fprintf(f, ", %s, ", diff_op_name(c));
		if (c->arg_kind == ARG_PTR)
			fprintf(f, "&(u64)%llu)", (unsigned long long)c->arg);
		else if (c->arg_kind == ARG_NULL)
			fprintf(f, "NULL)");
		else if (c->arg_kind == ARG_BADPTR)
			fprintf(f, "(void *)8)");
		else if (c->arg_kind == ARG_FD)
			print_ref(f, (int)(int64_t)c->arg), fprintf(f, ")");
		else
			fprintf(f, "%lld)", (long long)c->arg);
		return;
	case DIFF_READ:
		fprintf(f, "read(");
		print_ref(f, c->ref);
		fprintf(f, ", buf, %zu)", c->count);
		return;
	case DIFF_MMAP:
		if (c->pages < 0)
			fprintf(f, "mmap(NULL, SIZE_MAX, ");
		else
			fprintf(f, "mmap(NULL, %lld pages, ", (long long)c->pages);
		fprintf(f, "prot=%#x, flags=%#x, ", c->prot, c->mflags);
		print_ref(f, c->ref);
		fprintf(f, ", %d pages + %d)", c->offset_pages, c->offset_byte);
		return;
	case DIFF_POLL:
		fprintf(f, "poll(");
		print_ref(f, c->ref);
		fprintf(f, ", events=%#x, 0)", (unsigned)c->events);
		return;
	case DIFF_CLOSE:
		fprintf(f, "close(");
		print_ref(f, c->ref);
		fprintf(f, ")");
		return;
	}
}

void diff_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}
