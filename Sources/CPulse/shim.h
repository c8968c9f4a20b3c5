// libpulse's declarations, for the sound server's client library loaded at run time.
//
// hark does not link libpulse: linking it maps libpulse and about 30 libraries it pulls in at
// every start (measured: +2.3 MiB peak RSS for a program that never calls it), and a recording
// from a plain ALSA device never needs it. `PulseLibrary` opens libpulse.so.0 with dlopen when a
// command first needs the sound server, and calls it through function pointers of these types,
// each declared from the real prototype so a mismatch cannot compile.
#ifndef HARK_CPULSE_SHIM_H
#define HARK_CPULSE_SHIM_H

#include <pulse/context.h>
#include <pulse/introspect.h>
#include <pulse/mainloop.h>
#include <pulse/error.h>
#include <pulse/proplist.h>
#include <pulse/stream.h>
#include <dlfcn.h>

typedef __typeof__(&pa_mainloop_new) hark_pa_mainloop_new;
typedef __typeof__(&pa_mainloop_free) hark_pa_mainloop_free;
typedef __typeof__(&pa_mainloop_get_api) hark_pa_mainloop_get_api;
typedef __typeof__(&pa_mainloop_prepare) hark_pa_mainloop_prepare;
typedef __typeof__(&pa_mainloop_poll) hark_pa_mainloop_poll;
typedef __typeof__(&pa_mainloop_dispatch) hark_pa_mainloop_dispatch;
typedef __typeof__(&pa_context_new) hark_pa_context_new;
typedef __typeof__(&pa_context_unref) hark_pa_context_unref;
typedef __typeof__(&pa_context_connect) hark_pa_context_connect;
typedef __typeof__(&pa_context_disconnect) hark_pa_context_disconnect;
typedef __typeof__(&pa_context_get_state) hark_pa_context_get_state;
typedef __typeof__(&pa_context_errno) hark_pa_context_errno;
typedef __typeof__(&pa_context_get_server_info) hark_pa_context_get_server_info;
typedef __typeof__(&pa_context_get_source_info_list) hark_pa_context_get_source_info_list;
typedef __typeof__(&pa_context_get_source_info_by_name) hark_pa_context_get_source_info_by_name;
typedef __typeof__(&pa_context_get_source_output_info_list) hark_pa_context_get_source_output_info_list;
typedef __typeof__(&pa_operation_get_state) hark_pa_operation_get_state;
typedef __typeof__(&pa_operation_unref) hark_pa_operation_unref;
typedef __typeof__(&pa_operation_cancel) hark_pa_operation_cancel;
typedef __typeof__(&pa_proplist_gets) hark_pa_proplist_gets;
typedef __typeof__(&pa_strerror) hark_pa_strerror;

// The record stream (SoundServerCapture).
typedef __typeof__(&pa_stream_new_with_proplist) hark_pa_stream_new_with_proplist;
typedef __typeof__(&pa_stream_connect_record) hark_pa_stream_connect_record;
typedef __typeof__(&pa_stream_disconnect) hark_pa_stream_disconnect;
typedef __typeof__(&pa_stream_unref) hark_pa_stream_unref;
typedef __typeof__(&pa_stream_get_state) hark_pa_stream_get_state;
typedef __typeof__(&pa_stream_peek) hark_pa_stream_peek;
typedef __typeof__(&pa_stream_drop) hark_pa_stream_drop;
typedef __typeof__(&pa_stream_cork) hark_pa_stream_cork;
typedef __typeof__(&pa_stream_get_buffer_attr) hark_pa_stream_get_buffer_attr;
typedef __typeof__(&pa_stream_get_channel_map) hark_pa_stream_get_channel_map;
typedef __typeof__(&pa_stream_get_device_name) hark_pa_stream_get_device_name;
typedef __typeof__(&pa_stream_update_timing_info) hark_pa_stream_update_timing_info;
typedef __typeof__(&pa_stream_get_latency) hark_pa_stream_get_latency;
typedef __typeof__(&pa_stream_is_suspended) hark_pa_stream_is_suspended;
typedef __typeof__(&pa_proplist_new) hark_pa_proplist_new;
typedef __typeof__(&pa_proplist_sets) hark_pa_proplist_sets;
typedef __typeof__(&pa_proplist_free) hark_pa_proplist_free;

// PA_INVALID_INDEX is a cast macro, which Swift does not import.
static inline uint32_t hark_pa_invalid_index(void) { return PA_INVALID_INDEX; }

// PA_RATE_MAX is a cast expression, which Swift does not import.
static inline uint32_t hark_pa_rate_max(void) { return PA_RATE_MAX; }

#endif
