/*
 * command.h - the command a profiler runs: forked stopped before its
 * exec (so that events can be opened on its pid first and nothing it
 * does escapes them), started, watched and, when sampling ends before
 * it does, stopped.
 *
 *	struct kp_command c;
 *
 *	kp_command_fork(&c, argv);	events opened on c.pid here
 *	kp_command_start(&c);		exits 2 if it cannot be run
 *	... kp_command_done(&c) ...
 *	kp_command_stop(&c, 2.0);	SIGTERM, SIGKILL 2 s later
 *
 * The caller blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD (and takes them
 * while it waits); the command starts with no signal blocked.
 */
#ifndef KP_COMMAND_H
#define KP_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

struct kp_command {
	pid_t pid;
	int status;  /* from waitpid, -1 while it runs */
	const char *name;
	int go_fd, err_fd;
};

/* Fork argv[0] (found on PATH), stopped before its exec.  Exits 2 on
 * failure. */
void kp_command_fork(struct kp_command *c, char **argv);
/* Let it exec; if it cannot (no such file ...): message, exit 2. */
void kp_command_start(struct kp_command *c);
/* True once it has ended (its status is then in c->status). */
bool kp_command_done(struct kp_command *c);
/*
 * End a command still running: SIGTERM, then SIGKILL when it has not
 * ended after grace seconds, or at once on a second SIGINT, SIGTERM or
 * SIGHUP to us (a command that ignores SIGTERM must not hold the
 * profile back).  Returns when it has ended.
 */
void kp_command_stop(struct kp_command *c, double grace);
/* "exit 3" or "signal 9 (Killed)" into buf; said on stderr unless 0. */
void kp_command_status(const struct kp_command *c, char *buf, size_t size);

#endif /* KP_COMMAND_H */
