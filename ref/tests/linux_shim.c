/* The engine's API answered by the running kernel instead of the engine.
 *
 * Linked in place of //ref:ref, the same unit tests run against Linux, so every
 * expectation they hold about the ABI is checked against the oracle. Tests skip the few
 * places where ref diverges on purpose when PECS_ON_LINUX is set. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <poll.h>
#include <unistd.h>
#include "pecs/ref.h"
struct ref_engine { int x; };
struct ref_engine *ref_engine_new(const struct ref_config *c){(void)c; return calloc(1,sizeof(struct ref_engine));}
void ref_engine_free(struct ref_engine *e){free(e);}
int ref_engine_open(struct ref_engine *e, struct pecs_attr *a, pid_t pid, int cpu, int g, unsigned long f){(void)e; int r=syscall(SYS_perf_event_open,a,pid,cpu,g,f); if(r<0)return -errno; int n=fcntl(r,F_DUPFD,1000); close(r); return n;}
int ref_engine_close(struct ref_engine *e, int fd){(void)e; return close(fd)<0?-errno:0;}
ssize_t ref_engine_read(struct ref_engine *e, int fd, void *b, size_t n){(void)e; ssize_t r=read(fd,b,n); return r<0?-errno:r;}
ssize_t ref_engine_write(struct ref_engine *e, int fd, const void *b, size_t n){(void)e; ssize_t r=write(fd,b,n); return r<0?-errno:r;}
int ref_engine_ioctl(struct ref_engine *e, int fd, unsigned long req, unsigned long arg){(void)e; int r=ioctl(fd,req,arg); return r<0?-errno:r;}
int ref_engine_mmap(struct ref_engine *e, int fd, size_t len, int prot, int flags, off_t off, void **addr){(void)e; void *p=mmap(NULL,len,prot,flags,fd,off); if(p==MAP_FAILED)return -errno; *addr=p; return 0;}
int ref_engine_munmap(struct ref_engine *e, void *a, size_t l){(void)e; return munmap(a,l)<0?-errno:0;}
int ref_engine_poll(struct ref_engine *e, int fd, short ev, int t){(void)e; struct pollfd p={fd,ev,0}; int r=poll(&p,1,t); return r<0?-errno:p.revents;}
/* Linux has no way to hand it a sample: tests that need one skip on Linux. */
int ref_engine_inject_sample(struct ref_engine *e, int fd, const struct pecs_sample *s){(void)e; (void)fd; (void)s; return -ENOSYS;}
