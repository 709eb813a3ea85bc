/*
 * perfdata-cache.c - the program of samples/perfdata-cache*.data: three
 * functions that call each other, built without the C library (one
 * file holds all its frames) and run from a directory removed after the
 * capture, so that only perf's build-id cache (~/.debug) keeps a copy
 * (see perfdata-cache.data.how).
 */
static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long
cache_leaf(unsigned long x, int n)
{
	while (n-- > 0)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static unsigned long
cache_middle(unsigned long x)
{
	return cache_leaf(x, 3000) ^ cache_leaf(x >> 3, 1000);
}

__attribute__((noinline)) static unsigned long
cache_outer(unsigned long x)
{
	return cache_middle(x) + cache_leaf(x, 2000);
}

__attribute__((noinline)) int
main(void)
{
	unsigned long i;

	for (i = 0; i < 100000; i++)
		sink += cache_outer(i);
	return 0;
}

/* the entry: the end of every stack (no caller, rbp 0, rip undefined) */
__asm__(".text\n"
	".globl _start\n"
	".type _start, @function\n"
	"_start:\n"
	".cfi_startproc\n"
	".cfi_undefined rip\n"
	"	xor %ebp, %ebp\n"
	"	call main\n"
	"	mov $60, %eax\n"
	"	xor %edi, %edi\n"
	"	syscall\n"
	".cfi_endproc\n"
	".size _start, . - _start\n");
