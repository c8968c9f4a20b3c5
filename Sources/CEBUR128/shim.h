// libebur128 (EBU R128 / ITU-R BS.1770 loudness): the tests' reference meter. Every call is a plain
// function Swift calls directly; only Tests/LoudnessTests/Support/LibEBUR128Reference.swift makes them.
#ifndef HARK_CEBUR128_SHIM_H
#define HARK_CEBUR128_SHIM_H

#include <ebur128.h>

#endif
