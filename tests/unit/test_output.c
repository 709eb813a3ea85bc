/* test_output.c - unit tests of common/output.c: "-o FILE" is written
 * whole or not at all, whatever ends the writer (a signal, a fatal
 * error, a child that exits), and the caller's signal handlers stay */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kp.h"

#include "check.h"

static char dir[] = "/tmp/kp-test-output.XXXXXX";
static char path[64];

/* The names in dir, sorted and joined by spaces. */
static const char *
listing(void)
{
	static char buf[512];
	struct dirent **ents;
	int i, n = scandir(dir, &ents, NULL, alphasort);

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.' || strlen(ents[i]->d_name) > 2) {
			size_t len = strlen(buf);

			snprintf(buf + len, sizeof(buf) - len, "%s%s",
				 len ? " " : "", ents[i]->d_name);
		}
		free(ents[i]);
	}
	free(ents);
	return buf;
}

static const char *
contents(void)
{
	static char buf[64];
	FILE *fp = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (fp) {
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	return buf;
}

static void
put_old(void)
{
	FILE *fp = fopen(path, "w");

	fputs("old\n", fp);
	fclose(fp);
}

/* Run fn in a child; its wait status. */
static int
in_child(void (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		kp_quiet = true;
		fn();
		_exit(0);
	}
	waitpid(pid, &st, 0);
	return st;
}

static void
killed_while_writing(void)
{
	FILE *fp = kp_output_open(path);

	fputs("new, half written", fp);
	fflush(fp);
	raise(SIGTERM);
}

static void
dies_while_writing(void)
{
	FILE *fp = kp_output_open(path);

	fputs("new, half written", fp);
	fflush(fp);
	kp_die("a fatal error in the input");
}

static void
forks_then_finishes(void)
{
	FILE *fp = kp_output_open(path);
	pid_t pid;

	fputs("new\n", fp);
	fflush(fp);
	/* a child of the writer (a command kp-sample runs) that exits */
	pid = fork();
	if (pid == 0)
		exit(0);
	waitpid(pid, NULL, 0);
	_exit(kp_output_finish(fp, path));
}

static int handled;

static void
on_int(int sig)
{
	(void)sig;
	handled++;
}

static void
test_signals(void)
{
	struct sigaction sa, old;
	FILE *fp;

	/* a handler of the caller's (kp-sample's SIGINT) stays */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_int;
	sigaction(SIGINT, &sa, NULL);
	fp = kp_output_open(path);
	sigaction(SIGINT, NULL, &old);
	CHECK(old.sa_handler == on_int);
	raise(SIGINT);
	CHECK(handled == 1);
	/* SIGXFSZ is caught, not ignored: an ignored one would pass on
	 * through exec to a command the caller runs */
	sigaction(SIGXFSZ, NULL, &old);
	CHECK(old.sa_handler != SIG_IGN && old.sa_handler != SIG_DFL);
	fputs("new\n", fp);
	CHECK(kp_output_finish(fp, path) == KP_EXIT_OK);
	CHECK(strcmp(contents(), "new\n") == 0);
}

int
main(int argc, char **argv)
{
	int st;

	(void)argc;
	kp_init(argv);
	if (!mkdtemp(dir))
		return 2;
	snprintf(path, sizeof(path), "%s/f", dir);

	put_old();
	st = in_child(killed_while_writing);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	CHECK(strcmp(listing(), "f") == 0);
	CHECK(strcmp(contents(), "old\n") == 0);

	st = in_child(dies_while_writing);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == KP_EXIT_FATAL);
	CHECK(strcmp(listing(), "f") == 0);
	CHECK(strcmp(contents(), "old\n") == 0);

	st = in_child(forks_then_finishes);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == KP_EXIT_OK);
	CHECK(strcmp(listing(), "f") == 0);
	CHECK(strcmp(contents(), "new\n") == 0);

	put_old();
	test_signals();
	CHECK(strcmp(listing(), "f") == 0);

	unlink(path);
	rmdir(dir);
	return CHECK_DONE();
}
