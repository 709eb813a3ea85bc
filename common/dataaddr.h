/*
 * dataaddr.h - naming the memory a data address falls in, for
 * kp-sample --data: the outermost frames of a sample that carries a
 * data address (PERF_SAMPLE_ADDR, PHYS_ADDR, DATA_PAGE_SIZE), so that
 * kp-top and kp-inclusive count accesses by mapping, page size and
 * NUMA node.
 *
 *	[anon]  [4K]  [node0]  do_anonymous_page  ...  main
 *	(outermost first: the mapping, the page size, the node, the stack)
 *
 * The mapping's name: "[heap]", "[stack]", "[vdso]" ... as the kernel
 * names them in /proc/PID/maps and MMAP2 records; "[anon]" for an
 * anonymous mapping ("//anon" in a record, no path in maps); the file's
 * path for a file; "[kernel]" for a kernel address; "[unknown]" for an
 * address in no mapping known.
 */
#ifndef KP_DATAADDR_H
#define KP_DATAADDR_H

#include <stddef.h>
#include <stdint.h>

/*
 * The name of a mapping from its path as a record or /proc/PID/maps
 * gives it (NULL: no mapping holds the address), addr the address.
 * Returns an interned string.
 */
const char *kp_dataaddr_map_name(const char *path, uint64_t addr);

/*
 * The frame of a page size: "[4K]", "[2M]", "[1G]" (any power of two:
 * "[64K]"); NULL for 0 (the kernel did not say).  Interned.
 */
const char *kp_dataaddr_page_name(uint64_t size);

/* Physical memory by NUMA node, from sysfs. */
struct kp_numa;
/*
 * Read /sys/devices/system/node/node*\/memoryN and the memory block
 * size (devices NULL: /sys/devices/system).  NULL if sysfs says nothing
 * (no NUMA information: no node frames).
 */
struct kp_numa *kp_numa_load(const char *devices);
void kp_numa_free(struct kp_numa *nm);
/* The node of a physical address, or -1 if not known. */
int kp_numa_node(const struct kp_numa *nm, uint64_t phys);
/* "[node1]", interned. */
const char *kp_numa_node_name(int node);

/*
 * The outer frames of a sample that carries a data address
 * (PERF_SAMPLE_ADDR, and PHYS_ADDR, DATA_PAGE_SIZE where asked), its
 * mapping looked up in ps (which keeps data mappings:
 * kp_procs_keep_data) at the time of the sample: out[0] the mapping,
 * then the page size and the NUMA node where the kernel reported them.
 * Returns how many (1 to 3).
 */
struct kp_procs;
struct kp_perfev_sample;
struct kp_frame;
size_t kp_dataaddr_frames(struct kp_procs *ps, const struct kp_numa *nm,
			  const struct kp_perfev_sample *s,
			  const struct kp_frame *out[3]);

#endif /* KP_DATAADDR_H */
