/* strtab.c - the string interner and the arena behind it */
#include <string.h>

#include "internal.h"

#define ARENA_CHUNK (1u << 20)

static char *arena_cur;
static size_t arena_left;

void *
kp_arena_alloc(size_t n)
{
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (n > ARENA_CHUNK / 4)
		return kp_xmalloc(n);
	if (n > arena_left) {
		arena_cur = kp_xmalloc(ARENA_CHUNK);
		arena_left = ARENA_CHUNK;
	}
	p = arena_cur;
	arena_cur += n;
	arena_left -= n;
	return p;
}

/*
 * The strings, each after its length in the arena, in an open-addressing
 * table (uthash's chains cost a bucket, an entry and the key per probe,
 * 4% of perf2kp's time on a capture of mostly distinct stacks).
 */
static struct kp_slots strings;

const char *
kp_intern(const char *s, size_t len)
{
	uint64_t h = kp_hash(s, len);
	size_t mask, j;
	const char *c;
	char *copy;

	kp_slots_reserve(&strings, 4096);
	mask = strings.cap - 1;
	for (j = h & mask; (c = strings.tab[j].p) != NULL; j = (j + 1) & mask)
		if (strings.tab[j].hash == h &&
		    ((const size_t *)(const void *)c)[-1] == len &&
		    memcmp(c, s, len) == 0)
			return c;
	copy = kp_arena_alloc(sizeof(size_t) + len + 1);
	memcpy(copy, &len, sizeof(len));
	copy += sizeof(size_t);
	memcpy(copy, s, len);
	copy[len] = '\0';
	strings.tab[j].hash = h;
	strings.tab[j].p = copy;
	strings.n++;
	return copy;
}

const char *
kp_intern_str(const char *s)
{
	return s ? kp_intern(s, strlen(s)) : NULL;
}

size_t
kp_intern_count(void)
{
	return strings.n;
}
