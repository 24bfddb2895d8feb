/* The engine runs in its caller's process, so a bad pointer is one dereference away from
 * SIGSEGV. process_vm_readv()/process_vm_writev() on our own pid go through the kernel's
 * own fault handling and report EFAULT; where they are unavailable (no syscall, or a
 * seccomp filter refusing it) the copy falls back to memcpy and a bad pointer crashes
 * as it did before. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ref/uaccess/uaccess.h"

static int vm_usable = 1;

/* Bytes moved, -EFAULT, or -ENOSYS when the process_vm calls cannot be used. */
static ssize_t vm_copy(void *local, void *remote, size_t n, int to_remote)
{
	struct iovec l = {local, n}, r = {remote, n};
	size_t done = 0;
	ssize_t got;

	if (!__atomic_load_n(&vm_usable, __ATOMIC_RELAXED))
		return -ENOSYS;
	while (done < n) {
		l.iov_base = (char *)local + done;
		r.iov_base = (char *)remote + done;
		l.iov_len = r.iov_len = n - done;
		got = to_remote ? process_vm_writev(getpid(), &l, 1, &r, 1, 0)
				: process_vm_readv(getpid(), &l, 1, &r, 1, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
			/* Only the first call can meet these; nothing was copied yet. */
			__atomic_store_n(&vm_usable, 0, __ATOMIC_RELAXED);
			return -ENOSYS;
		}
		/* A short count means the next byte faulted. */
		if (got <= 0)
			return -EFAULT;
		done += (size_t)got;
	}
	return (ssize_t)done;
}

int ref_uaccess_copy_from_user(void *dst, const void *usrc, size_t n)
{
	ssize_t ret;

	if (!n)
		return 0;
	if (!usrc)
		return -EFAULT;
	ret = vm_copy(dst, (void *)usrc, n, 0);
	if (ret == -ENOSYS) {
		memcpy(dst, usrc, n);
		return 0;
	}
	return ret < 0 ? (int)ret : 0;
}

int ref_uaccess_copy_to_user(void *udst, const void *src, size_t n)
{
	ssize_t ret;

	if (!n)
		return 0;
	if (!udst)
		return -EFAULT;
	ret = vm_copy((void *)src, udst, n, 1);
	if (ret == -ENOSYS) {
		memcpy(udst, src, n);
		return 0;
	}
	return ret < 0 ? (int)ret : 0;
}

int ref_uaccess_check_zeroed_user(const void *usrc, size_t n)
{
	unsigned char chunk[256];
	size_t off = 0, len;
	int err;

	while (off < n) {
		len = n - off < sizeof(chunk) ? n - off : sizeof(chunk);
		err = ref_uaccess_copy_from_user(chunk, (const char *)usrc + off, len);
		if (err)
			return err;
		for (size_t i = 0; i < len; i++)
			if (chunk[i])
				return 0;
		off += len;
	}
	return 1;
}

long ref_uaccess_strnlen_user(const void *usrc, size_t max)
{
	char chunk[64];
	size_t off = 0, len;
	char *nul;
	int err;

	while (off < max) {
		/* Stop each read at a 4 KiB boundary, so no read reaches a page past the
		 * NUL's and faults where the kernel would not have looked. */
		size_t to_page = 4096 - (((uintptr_t)usrc + off) & 4095);

		len = sizeof(chunk);
		if (len > to_page)
			len = to_page;
		if (len > max - off)
			len = max - off;
		err = ref_uaccess_copy_from_user(chunk, (const char *)usrc + off, len);
		if (err)
			return err;
		nul = memchr(chunk, 0, len);
		if (nul)
			return (long)(off + (size_t)(nul - chunk));
		off += len;
	}
	return (long)max + 1;
}
