/* Copies between the engine and its caller's memory that fail with -EFAULT, as
 * copy_from_user()/copy_to_user() do, instead of crashing on a bad pointer. */
#ifndef REF_UACCESS_H
#define REF_UACCESS_H

#include <stddef.h>

/* 0, or -EFAULT when any byte of [usrc, usrc + n) cannot be read. dst may then hold
 * part of the bytes. */
int ref_uaccess_copy_from_user(void *dst, const void *usrc, size_t n);

/* 0, or -EFAULT when any byte of [udst, udst + n) cannot be written. The bytes before
 * the fault may have been written, as with the kernel's partial copies. */
int ref_uaccess_copy_to_user(void *udst, const void *src, size_t n);

/* 1 when the n bytes at usrc are all zero, 0 when one is not, -EFAULT when they cannot
 * be read (check_zeroed_user()). */
int ref_uaccess_check_zeroed_user(const void *usrc, size_t n);

/* The length of the NUL-terminated string at usrc, NUL not counted, reading at most max
 * bytes: max + 1 when none of them is a NUL, -EFAULT when a byte up to the NUL cannot be
 * read (strnlen_user(), which counts the NUL). */
long ref_uaccess_strnlen_user(const void *usrc, size_t max);

#endif /* REF_UACCESS_H */
