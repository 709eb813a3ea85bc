/* strtab.c - the string interner and the arena behind it */
#include <string.h>

#include "internal.h"

#define ARENA_CHUNK (1u << 20)

/* each thread's own (two may intern at once: internal.h) */
static _Thread_local char *arena_cur;
static _Thread_local size_t arena_left;


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
static struct kp_shard strings[KP_SHARDS];

const char *
kp_intern(const char *s, size_t len)
{
	uint64_t h = kp_hash(s, len);
	struct kp_shard *sh = &strings[KP_SHARD_OF(h)];
	size_t mask, j;
	const char *c;
	char *copy;

	kp_shard_lock(sh);
	kp_slots_reserve(&sh->t, 4096 / KP_SHARDS);
	mask = sh->t.cap - 1;
	for (j = h & mask; (c = sh->t.tab[j].p) != NULL; j = (j + 1) & mask)
		if (sh->t.tab[j].hash == h && kp_intern_is(c, s, len))
			goto out;
	copy = kp_arena_alloc(sizeof(size_t) + len + 1);
	memcpy(copy, &len, sizeof(len));
	copy += sizeof(size_t);
	memcpy(copy, s, len);
	copy[len] = '\0';
	sh->t.tab[j].hash = h;
	sh->t.tab[j].p = copy;
	c = copy;
	sh->t.n++;
out:
	kp_shard_unlock(sh);
	return c;
}

bool
kp_intern_is(const char *c, const char *s, size_t len)
{
	size_t clen;

	memcpy(&clen, c - sizeof(size_t), sizeof(clen));
	return clen == len && memcmp(c, s, len) == 0;
}

const char *
kp_intern_str(const char *s)
{
	return s ? kp_intern(s, strlen(s)) : NULL;
}

size_t
kp_intern_count(void)
{
	size_t i, n = 0;

	for (i = 0; i < KP_SHARDS; i++)
		n += strings[i].t.n;
	return n;
}
