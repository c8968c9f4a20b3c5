import CPulse
#if canImport(Glibc)
import Glibc
#endif

/// libpulse, the sound server's own client library (PulseAudio, and PipeWire through its
/// PulseAudio protocol), opened with `dlopen` the first time a command needs it.
///
/// Why not linked: see `Sources/CPulse/shim.h` (a linked libpulse costs every recording 2.3 MiB of
/// peak RSS). The library is never closed, so the function pointers stay valid for the process's
/// life; they are immutable after loading, which is why the type may cross threads.
///
/// Every libpulse call hark makes goes through this file, `SoundServerConnection.swift` and
/// `SoundServerCapture.swift`.
struct PulseLibrary: @unchecked Sendable {
    let mainloopNew: hark_pa_mainloop_new
    let mainloopFree: hark_pa_mainloop_free
    let mainloopGetAPI: hark_pa_mainloop_get_api
    let mainloopPrepare: hark_pa_mainloop_prepare
    let mainloopPoll: hark_pa_mainloop_poll
    let mainloopDispatch: hark_pa_mainloop_dispatch
    let contextNew: hark_pa_context_new
    let contextUnref: hark_pa_context_unref
    let contextConnect: hark_pa_context_connect
    let contextDisconnect: hark_pa_context_disconnect
    let contextGetState: hark_pa_context_get_state
    let contextErrno: hark_pa_context_errno
    let contextGetServerInfo: hark_pa_context_get_server_info
    let contextGetSourceInfoList: hark_pa_context_get_source_info_list
    let contextGetSourceInfoByName: hark_pa_context_get_source_info_by_name
    let contextGetSourceOutputInfoList: hark_pa_context_get_source_output_info_list
    let operationGetState: hark_pa_operation_get_state
    let operationUnref: hark_pa_operation_unref
    let operationCancel: hark_pa_operation_cancel
    let proplistGets: hark_pa_proplist_gets
    let strerror: hark_pa_strerror
    // The record stream (`SoundServerCapture`).
    let streamNew: hark_pa_stream_new_with_proplist
    let streamConnectRecord: hark_pa_stream_connect_record
    let streamDisconnect: hark_pa_stream_disconnect
    let streamUnref: hark_pa_stream_unref
    let streamGetState: hark_pa_stream_get_state
    let streamPeek: hark_pa_stream_peek
    let streamDrop: hark_pa_stream_drop
    let streamCork: hark_pa_stream_cork
    let streamGetBufferAttr: hark_pa_stream_get_buffer_attr
    let streamGetChannelMap: hark_pa_stream_get_channel_map
    let streamGetDeviceName: hark_pa_stream_get_device_name
    let streamUpdateTimingInfo: hark_pa_stream_update_timing_info
    let streamGetLatency: hark_pa_stream_get_latency
    let streamIsSuspended: hark_pa_stream_is_suspended
    let proplistNew: hark_pa_proplist_new
    let proplistSets: hark_pa_proplist_sets
    let proplistFree: hark_pa_proplist_free

    /// The loaded library, or why it could not be loaded (libpulse0 not installed).
    static let shared: Result<PulseLibrary, SoundServerError> = load()

    /// The corresponding C functions are `dlopen` and `dlsym`.
    private static func load() -> Result<PulseLibrary, SoundServerError> {
        guard let handle = dlopen("libpulse.so.0", RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(.libraryMissing(reason))
        }
        func symbol<Function>(_ name: String, as type: Function.Type) throws(SoundServerError) -> Function {
            guard let address = dlsym(handle, name) else { throw .libraryMissing("libpulse.so.0 has no \(name)") }
            return unsafeBitCast(address, to: type)
        }
        do throws(SoundServerError) {
            return .success(PulseLibrary(
                mainloopNew: try symbol("pa_mainloop_new", as: hark_pa_mainloop_new.self),
                mainloopFree: try symbol("pa_mainloop_free", as: hark_pa_mainloop_free.self),
                mainloopGetAPI: try symbol("pa_mainloop_get_api", as: hark_pa_mainloop_get_api.self),
                mainloopPrepare: try symbol("pa_mainloop_prepare", as: hark_pa_mainloop_prepare.self),
                mainloopPoll: try symbol("pa_mainloop_poll", as: hark_pa_mainloop_poll.self),
                mainloopDispatch: try symbol("pa_mainloop_dispatch", as: hark_pa_mainloop_dispatch.self),
                contextNew: try symbol("pa_context_new", as: hark_pa_context_new.self),
                contextUnref: try symbol("pa_context_unref", as: hark_pa_context_unref.self),
                contextConnect: try symbol("pa_context_connect", as: hark_pa_context_connect.self),
                contextDisconnect: try symbol("pa_context_disconnect", as: hark_pa_context_disconnect.self),
                contextGetState: try symbol("pa_context_get_state", as: hark_pa_context_get_state.self),
                contextErrno: try symbol("pa_context_errno", as: hark_pa_context_errno.self),
                contextGetServerInfo: try symbol("pa_context_get_server_info", as: hark_pa_context_get_server_info.self),
                contextGetSourceInfoList: try symbol("pa_context_get_source_info_list",
                                                     as: hark_pa_context_get_source_info_list.self),
                contextGetSourceInfoByName: try symbol("pa_context_get_source_info_by_name",
                                                       as: hark_pa_context_get_source_info_by_name.self),
                contextGetSourceOutputInfoList: try symbol("pa_context_get_source_output_info_list",
                                                           as: hark_pa_context_get_source_output_info_list.self),
                operationGetState: try symbol("pa_operation_get_state", as: hark_pa_operation_get_state.self),
                operationUnref: try symbol("pa_operation_unref", as: hark_pa_operation_unref.self),
                operationCancel: try symbol("pa_operation_cancel", as: hark_pa_operation_cancel.self),
                proplistGets: try symbol("pa_proplist_gets", as: hark_pa_proplist_gets.self),
                strerror: try symbol("pa_strerror", as: hark_pa_strerror.self),
                streamNew: try symbol("pa_stream_new_with_proplist", as: hark_pa_stream_new_with_proplist.self),
                streamConnectRecord: try symbol("pa_stream_connect_record", as: hark_pa_stream_connect_record.self),
                streamDisconnect: try symbol("pa_stream_disconnect", as: hark_pa_stream_disconnect.self),
                streamUnref: try symbol("pa_stream_unref", as: hark_pa_stream_unref.self),
                streamGetState: try symbol("pa_stream_get_state", as: hark_pa_stream_get_state.self),
                streamPeek: try symbol("pa_stream_peek", as: hark_pa_stream_peek.self),
                streamDrop: try symbol("pa_stream_drop", as: hark_pa_stream_drop.self),
                streamCork: try symbol("pa_stream_cork", as: hark_pa_stream_cork.self),
                streamGetBufferAttr: try symbol("pa_stream_get_buffer_attr", as: hark_pa_stream_get_buffer_attr.self),
                streamGetChannelMap: try symbol("pa_stream_get_channel_map", as: hark_pa_stream_get_channel_map.self),
                streamGetDeviceName: try symbol("pa_stream_get_device_name", as: hark_pa_stream_get_device_name.self),
                streamUpdateTimingInfo: try symbol("pa_stream_update_timing_info", as: hark_pa_stream_update_timing_info.self),
                streamGetLatency: try symbol("pa_stream_get_latency", as: hark_pa_stream_get_latency.self),
                streamIsSuspended: try symbol("pa_stream_is_suspended", as: hark_pa_stream_is_suspended.self),
                proplistNew: try symbol("pa_proplist_new", as: hark_pa_proplist_new.self),
                proplistSets: try symbol("pa_proplist_sets", as: hark_pa_proplist_sets.self),
                proplistFree: try symbol("pa_proplist_free", as: hark_pa_proplist_free.self)
            ))
        } catch {
            return .failure(error)
        }
    }
}
