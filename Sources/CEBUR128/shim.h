// libebur128 (EBU R128 / ITU-R BS.1770 loudness). Every call hark makes is a plain function Swift
// calls directly; only Sources/Loudness/EBUR128State.swift makes them.
#ifndef HARK_CEBUR128_SHIM_H
#define HARK_CEBUR128_SHIM_H

#include <ebur128.h>

#endif
