// Linux interfaces Swift's Glibc module does not show: headers only, the functions are glibc's.
#ifndef HARK_CLINUX_SHIM_H
#define HARK_CLINUX_SHIM_H

// signalfd(2): the stop signals as a readable descriptor, so the session's thread can sleep in
// one poll(2) on them, the permission files' changes and the desktop switch's pipe together.
#include <sys/signalfd.h>

#endif
