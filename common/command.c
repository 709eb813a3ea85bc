/* command.c - the command a profiler runs.  See command.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "command.h"
#include "kp.h"

void
kp_command_fork(struct kp_command *c, char **argv)
{
	int go[2], err[2];
	char ch;
	int e;

	memset(c, 0, sizeof(*c));
	c->status = -1;
	c->name = argv[0];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		kp_die("pipe:");
	c->pid = fork();
	if (c->pid < 0)
		kp_die("fork:");
	if (c->pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		close(err[0]);
		if (read(go[0], &ch, 1) != 1)
			_exit(127); /* the profiler gave up */
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	c->go_fd = go[1];
	c->err_fd = err[0];
}

void
kp_command_start(struct kp_command *c)
{
	ssize_t n;
	int e;

	if (write(c->go_fd, "g", 1) != 1)
		kp_die("pipe to the command:");
	close(c->go_fd);
	n = read(c->err_fd, &e, sizeof(e));
	close(c->err_fd);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(c->pid, NULL, 0);
		kp_die("cannot run '%s': %s", c->name, strerror(e));
	}
}

bool
kp_command_done(struct kp_command *c)
{
	int st;

	if (c->status >= 0)
		return true;
	if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
		c->status = st;
		return true;
	}
	return false;
}

void
kp_command_stop(struct kp_command *c, double grace)
{
	struct timespec ts, t0, t1;
	sigset_t set;
	double left;
	int sig;

	if (kp_command_done(c))
		return;
	kill(c->pid, SIGTERM);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!kp_command_done(c)) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = grace - (double)(t1.tv_sec - t0.tv_sec) -
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (left <= 0)
			break;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			break; /* asked twice: no more waiting */
	}
	if (!kp_command_done(c)) {
		kp_warn("%s did not end on SIGTERM: killing it", c->name);
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
			;
	}
}

void
kp_command_status(const struct kp_command *c, char *buf, size_t size)
{
	buf[0] = '\0';
	if (c->status < 0)
		return;
	if (WIFEXITED(c->status)) {
		snprintf(buf, size, "exit %d", WEXITSTATUS(c->status));
		if (WEXITSTATUS(c->status))
			kp_warn("%s exited with status %d", c->name,
				WEXITSTATUS(c->status));
	} else if (WIFSIGNALED(c->status)) {
		snprintf(buf, size, "signal %d (%s)", WTERMSIG(c->status),
			 strsignal(WTERMSIG(c->status)));
		kp_warn("%s was killed by signal %d (%s)", c->name,
			WTERMSIG(c->status), strsignal(WTERMSIG(c->status)));
	}
}
