// Linux interfaces Swift's Glibc module does not show: headers only, the functions are glibc's.
#ifndef HARK_CLINUX_SHIM_H
#define HARK_CLINUX_SHIM_H

// signalfd(2): the stop signals as a readable descriptor, so the session's thread can sleep in
// one poll(2) on them, the permission files' changes and the desktop switch's pipe together.
#include <sys/signalfd.h>
#include <sys/types.h>

// copy_file_range(2), SEEK_DATA and SEEK_HOLE (lseek(2)) are declared only under _GNU_SOURCE:
// hark repair copies the unchanged ranges of a file in the kernel, skipping its holes.
extern ssize_t copy_file_range(int fd_in, __off64_t *off_in, int fd_out, __off64_t *off_out, size_t len, unsigned int flags);
static const int hark_seek_data = 3;  // SEEK_DATA in glibc's <unistd.h>
static const int hark_seek_hole = 4;  // SEEK_HOLE

// posix_spawn_file_actions_addclosefrom_np (glibc 2.34): the desktop-switch helper is started
// with nothing open but its three standard descriptors, whatever its parent holds.
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

// O_TMPFILE (open(2)), a macro glibc defines only under _GNU_SOURCE, so Swift cannot see it: a
// recording's file is made without a name until its first audio, so a SIGKILL before then leaves
// nothing behind (the kernel frees a file that was never linked).
#include <fcntl.h>
static const int hark_open_tmpfile = __O_TMPFILE;

// renameat2(2) with RENAME_NOREPLACE (glibc declares it only under _GNU_SOURCE): a name that must
// be new is taken without replacing anything on file systems without hard links (vfat, exFAT).
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
static const unsigned int hark_rename_noreplace = 1;  // RENAME_NOREPLACE in <linux/fs.h>

// fallocate(2) with FALLOC_FL_KEEP_SIZE (glibc declares it only under _GNU_SOURCE): a new output
// sets aside room for its first second of audio before it replaces a file of the same name, so a
// disk too full for that fails the output while the old file is still there.
extern int fallocate(int fd, int mode, __off64_t offset, __off64_t len);
static const int hark_falloc_keep_size = 1;  // FALLOC_FL_KEEP_SIZE in <linux/falloc.h>

// statx(2) (glibc declares it only under _GNU_SOURCE): a file's device, inode number and birth
// time in one lookup. With the inode number, the birth time tells a recording's finished file
// from a new file that reuses the number of a deleted one; -1 in *birth_seconds where the file
// system keeps none. `path` "" means the file open on `descriptor`; else `path`, links followed.
#include <sys/stat.h>
#include <linux/stat.h>
extern int statx(int dirfd, const char *pathname, int flags, unsigned int mask, struct statx *statxbuf);
static inline int hark_file_identity(int descriptor, const char *path, unsigned long long *device, unsigned long long *inode,
                                     long long *birth_seconds, unsigned int *birth_nanoseconds) {
    struct statx info;
    int empty = path[0] == 0;
    if (statx(empty ? descriptor : AT_FDCWD, path, empty ? 0x1000 /* AT_EMPTY_PATH, a _GNU_SOURCE name */ : 0, STATX_INO | STATX_BTIME, &info) != 0) return -1;
    *device = ((unsigned long long)info.stx_dev_major << 32) | info.stx_dev_minor;
    *inode = info.stx_ino;
    *birth_seconds = (info.stx_mask & STATX_BTIME) ? info.stx_btime.tv_sec : -1;
    *birth_nanoseconds = (info.stx_mask & STATX_BTIME) ? info.stx_btime.tv_nsec : 0;
    return 0;
}

// POLLRDHUP (poll(2), declared only under _GNU_SOURCE): a TCP reader that has closed its end shows
// only this, not POLLHUP, to a writer that polls an armed output's socket.
static const short hark_pollrdhup = 0x2000;

#endif
