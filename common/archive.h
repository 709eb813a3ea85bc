/*
 * archive.h - what offline symbolization of a capture needs, saved as
 * oparchive does (kp-sample --archive DIR, read back by kp-addr2sym
 * through the "# archive:" metadata line):
 *
 *	DIR/kallsyms	/proc/kallsyms
 *	DIR/modules	/proc/modules
 *	DIR/notes	/sys/kernel/notes (the kernel's build-id)
 *	DIR/uname	sysname release version machine
 *	DIR/sections	"MODULE SECTION 0xADDRESS", one line per loaded
 *			module section (/sys/module/MOD/sections/SECTION)
 *
 * Written safely when run as root in a shared place: DIR is made if
 * missing, else it must be a directory (not a symbolic link) owned by
 * the user running us; each file is written under a fresh name in DIR
 * (O_CREAT | O_EXCL | O_NOFOLLOW) and renamed over the old one, so a
 * symbolic link planted at DIR/kallsyms is replaced, never followed.
 */
#ifndef KP_ARCHIVE_H
#define KP_ARCHIVE_H

/* Save the archive; returns DIR's absolute path (malloc'ed).  Any
 * failure is fatal (exit 2) with "--archive DIR: reason". */
char *kp_archive_save(const char *dir);

/* The running kernel's GNU build-id (/sys/kernel/notes) as hex, or
 * NULL.  The caller frees it. */
char *kp_kernel_build_id(void);

#endif /* KP_ARCHIVE_H */
