/*
 * symtab_int.h - the inside of struct kp_symtab, shared by the loaders
 * in common/symtab*.c.  Not for filters: use symtab.h.
 */
#ifndef KP_SYMTAB_INT_H
#define KP_SYMTAB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_symtab_ent {
	uint64_t addr;
	uint64_t size; /* 0: up to the next symbol */
	const char *name;
	const char *module;
	uint32_t seq; /* load order, for stable alias choice */
	char type;
};

/* One address: the alias a lookup returns and where it ends. */
struct kp_symtab_best {
	uint64_t addr;
	uint64_t end;
	size_t ent;
};

struct arena_block;

struct kp_symtab {
	struct kp_symtab_ent *ents;
	size_t n, cap;
	struct kp_symtab_best *best;
	size_t nbest;
	/* where a lookup searches: bucket k of the addresses from lo on,
	 * 2^shift bytes each, starts at best[bucket[k]] (NULL: everywhere) */
	uint32_t *bucket;
	size_t nbucket;
	uint64_t bucket_lo;
	unsigned bucket_shift;
	bool sorted;
	struct arena_block *arena;
	/* string tables mapped from files, their names not copied
	 * (symtab_elf.c, map_strings): unmapped with the table */
	struct kp_symtab_map {
		void *p;
		size_t len;
	} *maps;
	size_t nmaps;
	const char *last_mod;
	char err[512];
};

void kp_symtab_seterr(struct kp_symtab *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* kp_symtab_add of name[0..len), no module. */
void kp_symtab_add_n(struct kp_symtab *st, uint64_t addr, uint64_t size,
		     char type, const char *name, size_t len);
/* kp_symtab_add of a name that lives as long as st (a mapped string
 * table's, kept in st->maps): not copied. */
void kp_symtab_add_kept(struct kp_symtab *st, uint64_t addr, uint64_t size,
			char type, const char *name);

#endif /* KP_SYMTAB_INT_H */
