import AudioFormat
import CALSA
#if canImport(Glibc)
import Glibc
#endif

/// An ALSA channel map (`snd_pcm_chmap_t`) read into Swift: ALSA's names for its positions, and
/// the layout when hark can place every one of them.
struct ALSAChannelMap {
    /// ALSA's short names in channel order (`FL,FR,RL,RR,FC,LFE`), as `--channel-map` takes them;
    /// a position ALSA has no name for is its number.
    let names: String
    /// Nil when a position is one hark cannot place (`NA`, `RLC`, a driver-specific one…).
    let layout: ChannelLayout?

    /// Reads `map`, which ALSA owns (it is not freed here). `pos` is a flexible array member right
    /// after `channels`; each entry's low 16 bits are the position, the bits above flag a
    /// phase-inverted or driver-specific channel. The corresponding C function is `snd_pcm_chmap_name`.
    init(_ map: UnsafePointer<snd_pcm_chmap_t>) {
        let count = Int(map.pointee.channels)
        let positions = UnsafeRawPointer(map).advanced(by: MemoryLayout<UInt32>.size).assumingMemoryBound(to: UInt32.self)
        let values = (0..<count).map { positions[$0] & 0xFFFF }
        names = values.map { value in
            snd_pcm_chmap_name(snd_pcm_chmap_position(value)).map { String(cString: $0) } ?? "\(value)"
        }.joined(separator: ",")
        let placed = values.compactMap { SpeakerPosition(alsaPosition: $0) }
        layout = placed.count == count ? ChannelLayout(placed) : nil
    }

    /// The map `pcm` uses now, which after its hardware parameters are set is the one for the
    /// negotiated channel count; nil when the device has none (many USB devices; ALSA's file and
    /// null plugins unless configured with a `chmap`) or one for another count. The corresponding
    /// C function is `snd_pcm_get_chmap` (its result is malloc'd: freed here).
    static func current(_ pcm: OpaquePointer, channels: Int) -> ALSAChannelMap? {
        guard let map = snd_pcm_get_chmap(pcm) else { return nil }
        defer { free(map) }
        guard Int(map.pointee.channels) == channels else { return nil }
        return ALSAChannelMap(map)
    }

    /// Every map the device offers, one per channel count it names (a sound card's 2, 4, 6 and 8
    /// channel layouts), in ALSA's order. The corresponding C functions are `snd_pcm_query_chmaps`
    /// and `snd_pcm_free_chmaps`.
    static func offered(_ pcm: OpaquePointer) -> [ALSAChannelMap] {
        guard let queries = snd_pcm_query_chmaps(pcm) else { return [] }
        defer { snd_pcm_free_chmaps(queries) }
        // `map` follows `type` in snd_pcm_chmap_query_t; the array ends with a null pointer.
        let offset = MemoryLayout<snd_pcm_chmap_query_t>.offset(of: \snd_pcm_chmap_query_t.map)!
        var maps: [ALSAChannelMap] = []
        var index = 0
        while let query = queries[index] {
            maps.append(ALSAChannelMap(UnsafeRawPointer(query).advanced(by: offset).assumingMemoryBound(to: snd_pcm_chmap_t.self)))
            index += 1
        }
        return maps
    }
}
