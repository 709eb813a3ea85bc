/* dataaddr.c - names of the memory a data address falls in */
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataaddr.h"
#include "kp.h"
#include "perfev.h"
#include "procs.h"

const char *
kp_dataaddr_map_name(const char *path, uint64_t addr)
{
	if (kp_addr_is_kernel(addr))
		return kp_intern_str("[kernel]");
	if (!path)
		return kp_intern_str("[unknown]");
	if (!*path || strcmp(path, "//anon") == 0)
		return kp_intern_str("[anon]");
	return kp_intern_str(path);
}

const char *
kp_dataaddr_page_name(uint64_t size)
{
	static const char units[] = "KMGTPE";
	char buf[32];
	int u = 0;

	if (size == 0)
		return NULL;
	if (size < 1024 || (size & 1023)) {
		snprintf(buf, sizeof(buf), "[%" PRIu64 "B]", size);
		return kp_intern_str(buf);
	}
	size >>= 10;
	while (size >= 1024 && !(size & 1023) && units[u + 1]) {
		size >>= 10;
		u++;
	}
	snprintf(buf, sizeof(buf), "[%" PRIu64 "%c]", size, units[u]);
	return kp_intern_str(buf);
}

struct kp_numa {
	uint64_t block; /* bytes per memory block */
	short *node;    /* by block number; -1 none */
	size_t n;
};

struct kp_numa *
kp_numa_load(const char *devices)
{
	char path[PATH_MAX], buf[64];
	const char *dir = devices ? devices : "/sys/devices/system";
	struct kp_numa *nm;
	struct dirent *de, *me;
	DIR *d, *nd;
	FILE *fp;
	unsigned long node, blk;
	size_t i;

	snprintf(path, sizeof(path), "%s/memory/block_size_bytes", dir);
	if (!(fp = fopen(path, "re")))
		return NULL;
	nm = kp_xcalloc(1, sizeof(*nm));
	if (!fgets(buf, sizeof(buf), fp) ||
	    kp_parse_u64(buf, strcspn(buf, "\n"), 16, &nm->block) < 0 ||
	    nm->block == 0) {
		fclose(fp);
		free(nm);
		return NULL;
	}
	fclose(fp);
	snprintf(path, sizeof(path), "%s/node", dir);
	if (!(d = opendir(path))) {
		free(nm);
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, "node%lu", &node) != 1 || node > SHRT_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/node/%s", dir, de->d_name);
		if (!(nd = opendir(path)))
			continue;
		while ((me = readdir(nd)) != NULL) {
			if (sscanf(me->d_name, "memory%lu", &blk) != 1 ||
			    blk > (1ul << 24))
				continue;
			if (blk >= nm->n) {
				nm->node = kp_xrealloc(nm->node, (blk + 1) *
							 sizeof(*nm->node));
				for (i = nm->n; i <= blk; i++)
					nm->node[i] = -1;
				nm->n = blk + 1;
			}
			nm->node[blk] = (short)node;
		}
		closedir(nd);
	}
	closedir(d);
	if (nm->n == 0) {
		free(nm);
		return NULL;
	}
	return nm;
}

void
kp_numa_free(struct kp_numa *nm)
{
	if (!nm)
		return;
	free(nm->node);
	free(nm);
}

int
kp_numa_node(const struct kp_numa *nm, uint64_t phys)
{
	uint64_t b;

	if (!nm || phys == 0)
		return -1;
	b = phys / nm->block;
	return b < nm->n ? nm->node[b] : -1;
}

const char *
kp_numa_node_name(int node)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "[node%d]", node);
	return kp_intern_str(buf);
}

size_t
kp_dataaddr_frames(struct kp_procs *ps, const struct kp_numa *nm,
		   const struct kp_perfev_sample *s,
		   const struct kp_frame *out[3])
{
	struct kp_proc *p = kp_procs_get(ps, s->pid);
	const struct kp_map *m;
	const char *page;
	size_t n = 0;
	int node;

	if (!p->maps_known && s->pid != 0 && s->pid != (uint32_t)-1)
		kp_procs_scan(ps, s->pid, KP_PROCS_MAPS);
	m = kp_procs_map(ps, s->pid, s->addr); /* or the program before exec */
	out[n++] = kp_frame_make(0, 0,
				 kp_dataaddr_map_name(m ? m->path : NULL,
						      s->addr),
				 NULL);
	if ((page = kp_dataaddr_page_name(s->data_page_size)) != NULL)
		out[n++] = kp_frame_make(0, 0, page, NULL);
	if ((node = kp_numa_node(nm, s->phys_addr)) >= 0)
		out[n++] = kp_frame_make(0, 0, kp_numa_node_name(node), NULL);
	return n;
}
