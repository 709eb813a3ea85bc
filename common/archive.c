/* archive.c - kp-sample --archive.  See archive.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "archive.h"
#include "kp.h"

/* An archive file being written: a fresh name in the directory. */
struct afile {
	int dfd;
	const char *dir, *name;
	char tmp[64];
	FILE *fp;
};

static void
afile_open(struct afile *f, int dfd, const char *dir, const char *name)
{
	static unsigned seq;
	int fd, tries;

	f->dfd = dfd;
	f->dir = dir;
	f->name = name;
	for (tries = 0;; tries++) {
		snprintf(f->tmp, sizeof(f->tmp), ".%s.%d.%u", name,
			 (int)getpid(), seq++);
		fd = openat(dfd, f->tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC,
			    0644);
		if (fd >= 0 || errno != EEXIST || tries > 100)
			break;
	}
	if (fd < 0 || !(f->fp = fdopen(fd, "w")))
		kp_die("--archive %s: cannot create a file in it:", dir);
}

static void
afile_close(struct afile *f)
{
	if (ferror(f->fp) | fclose(f->fp)) {
		unlinkat(f->dfd, f->tmp, 0);
		kp_die("--archive %s: write error on %s:", f->dir, f->name);
	}
	/* rename replaces a link planted at the name, not its target */
	if (renameat(f->dfd, f->tmp, f->dfd, f->name) < 0) {
		unlinkat(f->dfd, f->tmp, 0);
		kp_die("--archive %s: %s:", f->dir, f->name);
	}
}

/* Copy the file from (a regular file or a /proc or /sys one) as name. */
static void
copy(int dfd, const char *dir, const char *from, const char *name,
     bool required)
{
	struct afile f;
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC);

	if (in < 0) {
		if (required)
			kp_die("--archive: %s:", from);
		return;
	}
	afile_open(&f, dfd, dir, name);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, f.fp);
	if (n < 0)
		kp_die("--archive: %s:", from);
	close(in);
	afile_close(&f);
}

/* One line per loaded module section: "MODULE SECTION 0xADDRESS". */
static void
write_sections(FILE *fp)
{
	char path[PATH_MAX], buf[64];
	struct dirent **mods, **secs;
	int nm, ns, i, j, fd;
	ssize_t n;

	nm = scandir("/sys/module", &mods, NULL, alphasort);
	for (i = 0; i < nm; i++) {
		snprintf(path, sizeof(path), "/sys/module/%s/sections",
			 mods[i]->d_name);
		ns = mods[i]->d_name[0] == '.'
			     ? -1
			     : scandir(path, &secs, NULL, alphasort);
		for (j = 0; j < ns; j++) {
			snprintf(path, sizeof(path),
				 "/sys/module/%s/sections/%s", mods[i]->d_name,
				 secs[j]->d_name);
			fd = strcmp(secs[j]->d_name, ".") == 0 ||
					     strcmp(secs[j]->d_name, "..") == 0
				     ? -1
				     : open(path, O_RDONLY | O_CLOEXEC);
			n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
			if (fd >= 0)
				close(fd);
			if (n > 0) {
				buf[n] = '\0';
				buf[strcspn(buf, "\n")] = '\0';
				fprintf(fp, "%s %s %s\n", mods[i]->d_name,
					secs[j]->d_name, buf);
			}
			free(secs[j]);
		}
		if (ns >= 0)
			free(secs);
		free(mods[i]);
	}
	if (nm >= 0)
		free(mods);
}

char *
kp_archive_save(const char *dir)
{
	struct utsname un;
	struct afile f;
	struct stat sb;
	char *real;
	int dfd;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		kp_die("--archive %s:", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			kp_die("--archive %s: not a directory%s", dir,
			       errno == ELOOP ? " (a symbolic link)" : "");
		kp_die("--archive %s:", dir);
	}
	if (fstat(dfd, &sb) < 0)
		kp_die("--archive %s:", dir);
	if (sb.st_uid != geteuid())
		kp_die("--archive %s: owned by uid %u, not by us (uid %u): "
		       "refusing to write into it",
		       dir, (unsigned)sb.st_uid, (unsigned)geteuid());
	copy(dfd, dir, "/proc/kallsyms", "kallsyms", true);
	copy(dfd, dir, "/proc/modules", "modules", false);
	copy(dfd, dir, "/sys/kernel/notes", "notes", false);
	afile_open(&f, dfd, dir, "uname");
	if (uname(&un) == 0)
		fprintf(f.fp, "%s %s %s %s\n", un.sysname, un.release,
			un.version, un.machine);
	afile_close(&f);
	afile_open(&f, dfd, dir, "sections");
	write_sections(f.fp);
	afile_close(&f);
	/* "# archive:" names it absolutely, for use from anywhere */
	real = realpath(dir, NULL);
	close(dfd);
	return real ? real : kp_xstrdup(dir);
}

/* The GNU build-id note in /sys/kernel/notes, as hex, or NULL. */
char *
kp_kernel_build_id(void)
{
	unsigned char buf[4096];
	uint32_t namesz, descsz, type;
	size_t off = 0, len, i;
	char *hex;
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return NULL;
	len = (size_t)n;
	/* Elf_Nhdr: namesz, descsz, type; name and desc padded to 4 */
	while (off + 12 <= len) {
		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		off += 12;
		if (namesz > len || descsz > len)
			return NULL;
		if (off + ((namesz + 3) & ~3u) + descsz > len)
			return NULL;
		if (type == 3 && namesz == 4 &&
		    memcmp(buf + off, "GNU", 4) == 0) {
			off += 4;
			hex = kp_xmalloc(descsz * 2 + 1);
			for (i = 0; i < descsz; i++)
				sprintf(hex + 2 * i, "%02x", buf[off + i]);
			hex[descsz * 2] = '\0';
			return hex;
		}
		off += ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
	}
	return NULL;
}
