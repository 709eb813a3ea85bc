/*
 * gen-kp.c - deterministic benchmark input: kp records drawn from a fixed
 * set of distinct stacks (realistic kernel depth and names), written until
 * the output reaches the requested size.
 *
 * usage: gen-kp MEGABYTES [DISTINCT_STACKS] > file.kp
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t seed = 88172645463325252ull;

static uint64_t
rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static const char *parts[] = {
	"do_syscall_64", "vfs_read", "ksys_write", "tcp_sendmsg", "ext4_file",
	"schedule", "__schedule", "finish_task_switch", "irq_exit_rcu",
	"handle_softirqs", "net_rx_action", "napi_poll", "copy_page_to_iter",
	"filemap_read", "page_cache_ra", "blk_mq_submit", "nvme_queue_rq",
	"kmem_cache_alloc", "__alloc_pages", "get_page_from_freelist",
};

int
main(int argc, char **argv)
{
	uint64_t target, written = 0;
	size_t nstacks, nsyms = 4000, i, j, k;
	char (*names)[64];
	uint64_t *addrs, *sizes;
	size_t **stacks, *depth;

	if (argc < 2) {
		fprintf(stderr, "usage: gen-kp MEGABYTES [DISTINCT_STACKS]\n");
		return 64;
	}
	target = strtoull(argv[1], NULL, 10) << 20;
	nstacks = argc > 2 ? strtoul(argv[2], NULL, 10) : 5000;
	names = malloc(nsyms * sizeof(*names));
	addrs = malloc(nsyms * sizeof(*addrs));
	sizes = malloc(nsyms * sizeof(*sizes));
	for (i = 0; i < nsyms; i++) {
		snprintf(names[i], sizeof(names[i]), "%s_%zu",
			 parts[rnd() % (sizeof(parts) / sizeof(parts[0]))], i);
		addrs[i] = 0xffffffff81000000ull + i * 0x400 + rnd() % 0x300;
		sizes[i] = 0x100 + rnd() % 0x300;
	}
	stacks = malloc(nstacks * sizeof(*stacks));
	depth = malloc(nstacks * sizeof(*depth));
	for (i = 0; i < nstacks; i++) {
		depth[i] = 8 + rnd() % 33;
		stacks[i] = malloc(depth[i] * sizeof(**stacks));
		for (j = 0; j < depth[i]; j++)
			stacks[i][j] = (i < nsyms ? i * 7 + j * 13 : rnd()) % nsyms;
	}
	printf("# event: cpu-clock\n# made by: gen-kp %s %zu\n", argv[1],
	       nstacks);
	while (written < target) {
		i = rnd() % nstacks;
		written += (uint64_t)printf("!\n");
		for (j = 0; j < depth[i]; j++) {
			k = stacks[i][j];
			written += (uint64_t)printf(
				" 0x%016llx : %s+0x%llx/0x%llx [kernel]\n",
				(unsigned long long)(addrs[k] + (j ? 0 : 0)),
				names[k], (unsigned long long)(addrs[k] & 0xff),
				(unsigned long long)sizes[k]);
		}
		written += (uint64_t)printf("\t%llu\n",
					    (unsigned long long)(1 + rnd() % 50));
	}
	printf("!\n");
	return 0;
}
