#include "pecs/stream/stream.h"

#include <errno.h>
#include <string.h>


int ref_stream_map_koid(const struct ref_stream_target *t, uint64_t koid, uint32_t *id)
{
	if (!t->koids && t->nr_koids == 0) {
		if (koid > UINT32_MAX)
			return -ENOENT;
		*id = (uint32_t)koid;
		return 0;
	}
	/* Maps hold a handful of processes and threads; a scan beats keeping them sorted. */
	for (size_t i = 0; i < t->nr_koids; i++) {
		if (t->koids[i].koid == koid) {
			*id = t->koids[i].linux_id;
			return 0;
		}
	}
	return -ENOENT;
}

const char *ref_stream_errc_name(enum ref_stream_errc code)
{
	switch (code) {
	case REF_STREAM_OK: return "OK";
	case REF_STREAM_E_SINK: return "SINK";
	case REF_STREAM_E_TRUNCATED: return "TRUNCATED";
	case REF_STREAM_E_NOMEM: return "NOMEM";
	case REF_FXT_E_MISSING_MAGIC: return "FXT_MISSING_MAGIC";
	case REF_FXT_E_ZERO_SIZE: return "FXT_ZERO_SIZE";
	case REF_FXT_E_BAD_MAGIC: return "FXT_BAD_MAGIC";
	case REF_FXT_E_BAD_METADATA: return "FXT_BAD_METADATA";
	case REF_FXT_E_BAD_INIT: return "FXT_BAD_INIT";
	case REF_FXT_E_BAD_STRING: return "FXT_BAD_STRING";
	case REF_FXT_E_BAD_THREAD: return "FXT_BAD_THREAD";
	case REF_FXT_E_BAD_STRING_REF: return "FXT_BAD_STRING_REF";
	case REF_FXT_E_BAD_KERNEL_OBJECT: return "FXT_BAD_KERNEL_OBJECT";
	case REF_FXT_E_BAD_BACKTRACE: return "FXT_BAD_BACKTRACE";
	case REF_FXT_E_BAD_MODULE: return "FXT_BAD_MODULE";
	case REF_FXT_E_BAD_MMAP: return "FXT_BAD_MMAP";
	case REF_FXT_E_BAD_USER_REGS: return "FXT_BAD_USER_REGS";
	case REF_MARKUP_E_LINE_TOO_LONG: return "MARKUP_LINE_TOO_LONG";
	case REF_MARKUP_E_BAD_LINE: return "MARKUP_BAD_LINE";
	case REF_MARKUP_E_BAD_ELEMENT: return "MARKUP_BAD_ELEMENT";
	case REF_MARKUP_E_BAD_NUMBER: return "MARKUP_BAD_NUMBER";
	case REF_MARKUP_E_BAD_BT: return "MARKUP_BAD_BT";
	case REF_MARKUP_E_BT_OUTSIDE_BLOCK: return "MARKUP_BT_OUTSIDE_BLOCK";
	case REF_MARKUP_E_BAD_FRAME_INDEX: return "MARKUP_BAD_FRAME_INDEX";
	case REF_MARKUP_E_TOO_MANY_FRAMES: return "MARKUP_TOO_MANY_FRAMES";
	case REF_MARKUP_E_BAD_RESET: return "MARKUP_BAD_RESET";
	case REF_MARKUP_E_BAD_MODULE: return "MARKUP_BAD_MODULE";
	case REF_MARKUP_E_BAD_MMAP: return "MARKUP_BAD_MMAP";
	}
	return NULL;
}

int ref_stream_target_load(struct ref_stream_target *t, struct ref_stream_observer *o,
			   const struct ref_stream_target *target)
{
	memset(t, 0, sizeof(*t));
	memset(o, 0, sizeof(*o));
	if (!target || !target->sink)
		return -EINVAL;
	*t = *target;
	if (t->observer) {
		*o = *t->observer;
		t->observer = o;
	}
	return 0;
}
