/*
 * perfdata-pseudo.c - code run from the mappings perf names without a
 * file: anonymous memory (//anon), a shared /dev/zero mapping, a memfd,
 * a file deleted while mapped, the heap and the stack, each made
 * executable and spun in for a while (x86-64).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* mov $2000000, %ecx; 1: dec %ecx; jnz 1b; ret */
static const unsigned char spin[] = { 0xb9, 0x80, 0x84, 0x1e, 0x00, 0xff,
				      0xc9, 0x75, 0xfc, 0xc3 };
#define PAGE 4096UL

static void
die(const char *what)
{
	perror(what);
	exit(1);
}

__attribute__((noinline)) static void
run(void *code, int times)
{
	void (*f)(void) = (void (*)(void))code;

	while (times-- > 0)
		f();
	__asm__ volatile("" ::: "memory");
}

static void *
at(void *p)
{
	memcpy(p, spin, sizeof(spin));
	__builtin___clear_cache((char *)p, (char *)p + sizeof(spin));
	return p;
}

int
main(int argc, char **argv)
{
	int times = argc > 1 ? atoi(argv[1]) : 200;
	char path[] = "/tmp/kp-pseudo-XXXXXX", stackbuf[3 * PAGE];
	void *anon, *zero, *mfd, *del, *heap, *stk;
	uintptr_t hp, top;
	FILE *fp;
	char line[512];
	int fd;

	/* //anon */
	anon = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		die("mmap anon");
	at(anon);
	/* /dev/zero (deleted): a shared mapping of /dev/zero is shmem */
	if ((fd = open("/dev/zero", O_RDWR)) < 0)
		die("/dev/zero");
	zero = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED,
		    fd, 0);
	if (zero == MAP_FAILED)
		die("mmap /dev/zero");
	close(fd);
	at(zero);
	/* /memfd:kp-jit (deleted) */
	if ((fd = memfd_create("kp-jit", 0)) < 0 ||
	    write(fd, spin, sizeof(spin)) != sizeof(spin))
		die("memfd");
	mfd = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (mfd == MAP_FAILED)
		die("mmap memfd");
	close(fd);
	/* /tmp/kp-pseudo-XXXXXX (deleted) */
	if ((fd = mkstemp(path)) < 0 ||
	    write(fd, spin, sizeof(spin)) != sizeof(spin))
		die("mkstemp");
	unlink(path);
	del = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (del == MAP_FAILED)
		die("mmap deleted");
	close(fd);
	/* [heap]: a page of the brk heap made executable */
	hp = ((uintptr_t)sbrk(0) + PAGE - 1) & ~(PAGE - 1);
	if (sbrk((intptr_t)(hp - (uintptr_t)sbrk(0) + PAGE)) == (void *)-1)
		die("sbrk");
	heap = (void *)hp;
	if (mprotect(heap, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		die("mprotect heap");
	at(heap);
	/* [stack]: the stack from a page of stackbuf to its top */
	stk = (void *)(((uintptr_t)stackbuf + PAGE - 1) & ~(PAGE - 1));
	top = 0;
	if (!(fp = fopen("/proc/self/maps", "r")))
		die("maps");
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, "[stack]"))
			top = strtoull(strchr(line, '-') + 1, NULL, 16);
	fclose(fp);
	if (!top || mprotect(stk, top - (uintptr_t)stk,
			     PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		die("mprotect stack");
	at(stk);
	/* ready: a -p capture starts now (its mappings read from /proc) */
	if (argc > 2) {
		printf("%d\n", getpid());
		fflush(stdout);
		sleep(atoi(argv[2]));
	}
	for (int i = 0; i < 3; i++) {
		run(anon, times);
		run(zero, times);
		run(mfd, times);
		run(del, times);
		run(heap, times);
		run(stk, times);
	}
	return 0;
}
