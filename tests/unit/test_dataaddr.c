/*
 * test_dataaddr.c - unit tests of common/dataaddr.c: the names of
 * mappings and page sizes, and NUMA nodes of physical addresses from a
 * fake sysfs laid out as /sys/devices/system is (and the real one,
 * where it is readable: every block it lists maps to its node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataaddr.h"
#include "kp.h"

#include "check.h"

static char root[256];

static void
put(const char *rel, const char *text)
{
	char path[512], *s;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	if (!(fp = fopen(path, "w"))) {
		perror(path);
		exit(2);
	}
	fputs(text, fp);
	fclose(fp);
}

static void
test_names(void)
{
	CHECK(strcmp(kp_dataaddr_map_name("[heap]", 0x55550000), "[heap]") == 0);
	CHECK(strcmp(kp_dataaddr_map_name("[stack]", 0x7ffd0000), "[stack]") == 0);
	CHECK(strcmp(kp_dataaddr_map_name("[vdso]", 0x7ffd0000), "[vdso]") == 0);
	CHECK(strcmp(kp_dataaddr_map_name("//anon", 0x7f0000000000), "[anon]") == 0);
	CHECK(strcmp(kp_dataaddr_map_name("", 0x7f0000000000), "[anon]") == 0);
	CHECK(strcmp(kp_dataaddr_map_name("/usr/lib/libc.so.6", 0x7f00),
		     "/usr/lib/libc.so.6") == 0);
	CHECK(strcmp(kp_dataaddr_map_name(NULL, 0x1000), "[unknown]") == 0);
	CHECK(strcmp(kp_dataaddr_map_name(NULL, 0xffff888000001000ull),
		     "[kernel]") == 0);
	/* interned: one pointer per name */
	CHECK(kp_dataaddr_map_name("//anon", 1) == kp_dataaddr_map_name("", 2));

	CHECK(kp_dataaddr_page_name(0) == NULL);
	CHECK(strcmp(kp_dataaddr_page_name(4096), "[4K]") == 0);
	CHECK(strcmp(kp_dataaddr_page_name(2 << 20), "[2M]") == 0);
	CHECK(strcmp(kp_dataaddr_page_name(1 << 30), "[1G]") == 0);
	CHECK(strcmp(kp_dataaddr_page_name(64 << 10), "[64K]") == 0);
	CHECK(strcmp(kp_dataaddr_page_name(512), "[512B]") == 0);
	CHECK(strcmp(kp_dataaddr_page_name(16ull << 30), "[16G]") == 0);
	CHECK(strcmp(kp_numa_node_name(1), "[node1]") == 0);
}

static void
test_numa(void)
{
	char path[512];
	struct kp_numa *nm;

	put("sys/memory/block_size_bytes", "8000000\n");
	put("sys/node/node0/memory0", "");
	put("sys/node/node0/memory1", "");
	put("sys/node/node0/cpu0", "");
	put("sys/node/node1/memory3", "");
	put("sys/node/node1/memory4", "");
	put("sys/node/possible", "0-1\n");
	snprintf(path, sizeof(path), "%s/sys", root);
	nm = kp_numa_load(path);
	CHECK(nm != NULL);
	CHECK(kp_numa_node(nm, 0x1000) == 0);
	CHECK(kp_numa_node(nm, 0x8000000 + 5) == 0);   /* block 1 */
	CHECK(kp_numa_node(nm, 0x10000000) == -1);     /* block 2: a hole */
	CHECK(kp_numa_node(nm, 0x18000000) == 1);      /* block 3 */
	CHECK(kp_numa_node(nm, 0x27ffffff) == 1);      /* end of block 4 */
	CHECK(kp_numa_node(nm, 0x28000000) == -1);     /* past the end */
	CHECK(kp_numa_node(nm, 0) == -1);              /* not reported */
	CHECK(kp_numa_node(NULL, 0x1000) == -1);
	kp_numa_free(nm);
	kp_numa_free(NULL);

	/* no block size, or no nodes: no NUMA information */
	snprintf(path, sizeof(path), "%s/none", root);
	CHECK(kp_numa_load(path) == NULL);
	put("bad/memory/block_size_bytes", "zz\n");
	snprintf(path, sizeof(path), "%s/bad", root);
	CHECK(kp_numa_load(path) == NULL);
	put("nonodes/memory/block_size_bytes", "8000000\n");
	put("nonodes/node/possible", "0\n");
	snprintf(path, sizeof(path), "%s/nonodes", root);
	CHECK(kp_numa_load(path) == NULL);

	/* this machine: memory0 is on some node */
	nm = kp_numa_load(NULL);
	if (nm) {
		CHECK(kp_numa_node(nm, 0x1000) >= 0);
		printf("this machine: physical 0x1000 on node %d\n",
		       kp_numa_node(nm, 0x1000));
		kp_numa_free(nm);
	} else {
		printf("no NUMA information in /sys/devices/system here\n");
	}
}

int
main(void)
{
	char cmd[300];

	snprintf(root, sizeof(root), "%s/kp-dataaddr-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 2;
	}
	test_names();
	test_numa();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return CHECK_DONE();
}
