// The libFLAC headers hark uses. Its calls are plain functions Swift calls directly.
#ifndef HARK_CFLAC_SHIM_H
#define HARK_CFLAC_SHIM_H

#include <FLAC/stream_encoder.h>
#include <FLAC/stream_decoder.h>
#include <FLAC/metadata.h>

// FLAC__VERSION_STRING is a mutable global in C; Swift 6 rejects reading it directly.
static inline const char *hark_flac_version(void) { return FLAC__VERSION_STRING; }

#endif
