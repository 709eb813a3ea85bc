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

struct str {
	const char *s;
	UT_hash_handle hh;
};

static struct str *strings;

const char *
kp_intern(const char *s, size_t len)
{
	struct str *e;
	char *copy;

	HASH_FIND(hh, strings, s, len, e);
	if (e)
		return e->s;
	e = kp_arena_alloc(sizeof(*e));
	copy = kp_arena_alloc(len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	e->s = copy;
	HASH_ADD_KEYPTR(hh, strings, copy, len, e);
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
	return HASH_COUNT(strings);
}
