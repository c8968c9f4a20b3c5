// libopusenc (Xiph's Ogg Opus writer) and libopus, plus the calls Swift cannot make directly.
#ifndef HARK_COPUSENC_SHIM_H
#define HARK_COPUSENC_SHIM_H

#include <opus/opus.h>
#include <opus/opus_multistream.h>
#include <opus/opusenc.h>

// ope_encoder_ctl is variadic, and the OPUS_SET_* / OPE_SET_* macros that build its arguments are
// not imported. Every setting hark uses takes one opus_int32, so one wrapper serves them all:
// the request constants (OPUS_SET_BITRATE_REQUEST, OPE_SET_MUXING_DELAY_REQUEST, ...) are plain
// integer macros that Swift does import.
static inline int hark_ope_set_int(OggOpusEnc *encoder, int request, opus_int32 value) {
    return ope_encoder_ctl(encoder, request, value);
}

// Reads one opus_int32 setting back (e.g. OPUS_GET_LOOKAHEAD_REQUEST).
static inline int hark_ope_get_int(OggOpusEnc *encoder, int request, opus_int32 *value) {
    return ope_encoder_ctl(encoder, request, value);
}

#endif
