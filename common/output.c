/*
 * output.c - "-o FILE": the whole file or none of it.
 *
 * The output is written to a temporary file in FILE's directory and
 * renamed over FILE only when every byte is written, so a failure (a
 * full disk, a file size limit, a fatal error in the input, a signal)
 * leaves the old FILE as it was and no partial file anywhere.  The new
 * file keeps the old one's permission bits (not set-id ones) and, where
 * allowed, its owner.
 *
 * A symbolic link is written through: its target is replaced the same
 * way and the link stays, as "sed -i --follow-symlinks" does.  A link
 * owned by another user is refused, the rule the kernel's
 * fs.protected_symlinks applies in /tmp: a link planted there must not
 * aim root's output at a file of its choosing.  An existing FILE that is
 * not a regular file (a device such as /dev/null, a FIFO) is opened and
 * written directly; nothing can be renamed over it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"

static char *tmp_path;   /* the temporary file, while it is there */
static char *final_path; /* what it becomes (a link's target resolved) */
static pid_t tmp_owner;  /* only this process removes it (not a child) */

static void
remove_tmp(void)
{
	if (tmp_path && getpid() == tmp_owner)
		unlink(tmp_path);
}

static void
drop_tmp(void)
{
	remove_tmp();
	free(tmp_path);
	free(final_path);
	tmp_path = final_path = NULL;
}

/* A fatal signal while the file is written: no temporary file stays. */
static void
on_signal(int sig)
{
	remove_tmp();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
on_xfsz(int sig)
{
	(void)sig;
}

static void
catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	static bool done;
	struct sigaction sa, old;
	size_t i;

	if (done)
		return;
	done = true;
	atexit(remove_tmp);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* only where the signal would kill: one the caller ignores
		 * (nohup) or handles itself (kp-sample's SIGINT: stop and
		 * write the profile) is left alone */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
	}
	/* past a file size limit, write fails with EFBIG and is reported,
	 * rather than the process dying with the temporary file there; a
	 * handler rather than SIG_IGN, which a command run by the caller
	 * would inherit through exec */
	sa.sa_handler = on_xfsz;
	if (sigaction(SIGXFSZ, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
		sigaction(SIGXFSZ, &sa, NULL);
}

/* The path to replace: path itself, or the target of a link of ours. */
static char *
resolve(const char *path, struct stat *sb, bool *exists)
{
	char *real;

	*exists = false;
	if (lstat(path, sb) < 0) {
		if (errno != ENOENT)
			kp_die("cannot create %s:", path);
		return kp_xstrdup(path);
	}
	if (S_ISLNK(sb->st_mode)) {
		if (sb->st_uid != geteuid())
			kp_die("%s: a symbolic link owned by another user; "
			       "not writing through it",
			       path);
		real = realpath(path, NULL);
		if (!real)
			kp_die("cannot create %s:", path);
		if (stat(real, sb) < 0)
			kp_die("cannot create %s:", path);
		*exists = true;
		return real;
	}
	*exists = true;
	return kp_xstrdup(path);
}

FILE *
kp_output_open(const char *path)
{
	struct stat sb;
	bool exists;
	char *target, *slash;
	mode_t mask;
	size_t dirlen;
	FILE *fp;
	int fd;

	if (!path || strcmp(path, "-") == 0)
		return stdout;
	target = resolve(path, &sb, &exists);
	if (exists && S_ISDIR(sb.st_mode)) {
		errno = EISDIR;
		kp_die("cannot create %s:", path);
	}
	if (exists && !S_ISREG(sb.st_mode)) {
		free(target);
		fp = fopen(path, "w");
		if (!fp)
			kp_die("cannot create %s:", path);
		return fp;
	}
	catch_signals();
	slash = strrchr(target, '/');
	dirlen = slash ? (size_t)(slash - target) + 1 : 0;
	tmp_path = kp_xmalloc(strlen(target) + 16);
	memcpy(tmp_path, target, dirlen);
	strcpy(tmp_path + dirlen, ".");
	strcat(tmp_path, target + dirlen);
	strcat(tmp_path, ".XXXXXX");
	final_path = target;
	tmp_owner = getpid();
	fd = mkostemp(tmp_path, O_CLOEXEC);
	if (fd < 0) {
		free(tmp_path);
		tmp_path = NULL;
		kp_die("cannot create %s:", path);
	}
	if (exists) {
		/* as the old file was; its owner where allowed (root), else
		 * the new file stays ours */
		if (fchown(fd, sb.st_uid, sb.st_gid) < 0)
			errno = 0;
		fchmod(fd, sb.st_mode & 0777);
	} else {
		mask = umask(0);
		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	fp = fdopen(fd, "w");
	if (!fp)
		kp_die("cannot create %s:", path);
	return fp;
}

int
kp_output_finish(FILE *fp, const char *path)
{
	int bad, saved;

	if (fp == stdout)
		return kp_finish();
	if (!tmp_path) {
		/* a device or FIFO, written directly */
		if (kp_close_output(fp, path) < 0)
			return KP_EXIT_FATAL;
		return kp_finish();
	}
	/* every byte on the disk before the name points at it */
	bad = fflush(fp) != 0 || ferror(fp) || fsync(fileno(fp)) < 0;
	saved = errno;
	if (fclose(fp) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	if (bad) {
		errno = saved ? saved : EIO;
		kp_warn("write error on %s:", path);
		drop_tmp();
		return KP_EXIT_FATAL;
	}
	if (rename(tmp_path, final_path) < 0) {
		kp_warn("cannot replace %s:", path);
		drop_tmp();
		return KP_EXIT_FATAL;
	}
	free(tmp_path);
	free(final_path);
	tmp_path = final_path = NULL;
	return kp_finish();
}
