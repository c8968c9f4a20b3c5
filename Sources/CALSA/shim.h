// The ALSA headers, plus the few calls Swift cannot make directly.
#ifndef HARK_CALSA_SHIM_H
#define HARK_CALSA_SHIM_H

#include <alsa/asoundlib.h>

// snd_lib_error_set_handler takes a variadic callback, which Swift cannot write.
// hark reports every ALSA error itself (one line, with an exit code), so ALSA's own
// stderr chatter is replaced by a handler that does nothing.
static void hark_alsa_discard_error(const char *file, int line, const char *function,
                                    int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void hark_alsa_silence_library_errors(void) {
    snd_lib_error_set_handler(hark_alsa_discard_error);
}

// Whether ALSA's configuration defines a PCM called `base` (the part of a device name before any
// ':' arguments: "hw" for "hw:1,0"). `snd_config` is a mutable global, which Swift 6 rejects.
static inline int hark_alsa_defines_pcm(const char *base) {
    if (snd_config_update() < 0 || snd_config == NULL) return 0;
    snd_config_t *pcms = NULL, *node = NULL;
    if (snd_config_search(snd_config, "pcm", &pcms) < 0) return 0;
    return snd_config_search(pcms, base, &node) >= 0;
}

// Which sound server's plugin the PCM `name` is, after ALSA's configuration is expanded (its hooks
// included, so Debian's "default is pulse while a sound server runs" and pipewire-alsa's "default
// is pipewire"): 1 for the `pulse` plugin, 2 for PipeWire's `pipewire` plugin, 0 for anything
// else. Opens nothing. `snd_config` is a mutable global, which Swift 6 rejects.
static inline int hark_alsa_pcm_sound_server_plugin(const char *name) {
    if (snd_config_update() < 0 || snd_config == NULL) return 0;
    snd_config_t *definition = NULL, *type = NULL;
    if (snd_config_search_definition(snd_config, "pcm", name, &definition) < 0) return 0;
    const char *value = NULL;
    int plugin = 0;
    if (snd_config_search(definition, "type", &type) >= 0 && snd_config_get_string(type, &value) >= 0 && value != NULL) {
        if (strcmp(value, "pulse") == 0) plugin = 1;
        else if (strcmp(value, "pipewire") == 0) plugin = 2;
    }
    snd_config_delete(definition);
    return plugin;
}

// What a PCM definition's audio comes from, followed through its slaves (`plug`, `route`, `rate`,
// `softvol`, `dsnoop`, a user's own chain; `asym`'s capture side): 1 when it reaches the `pulse`
// plugin, 2 PipeWire's `pipewire` plugin, 0 anything else (a card, a `file` plugin reading its
// `infile`, which is where its audio comes from, a chain it cannot follow). The plugin's source
// (pulse's `device`, pipewire's `capture_node`) is copied into `device` (empty when it names none:
// the server's default). The plugin's `server`, where it names one, is copied into `serverName`
// (empty: the server the environment names). At most 16 links, so a definition naming itself ends.
static inline int hark_alsa_definition_server(snd_config_t *definition, char *device, size_t size,
                                              char *serverName, size_t serverSize, int depth) {
    if (depth > 16) return 0;
    snd_config_t *node = NULL;
    const char *type = NULL;
    if (snd_config_search(definition, "type", &node) < 0 || snd_config_get_string(node, &type) < 0 || type == NULL) return 0;
    int server = strcmp(type, "pulse") == 0 ? 1 : strcmp(type, "pipewire") == 0 ? 2 : 0;
    if (server != 0) {
        const char *source = NULL;
        device[0] = 0;
        if (snd_config_search(definition, server == 1 ? "device" : "capture_node", &node) >= 0
            && snd_config_get_string(node, &source) >= 0 && source != NULL) {
            // PipeWire's own definition passes `-1` (its default node) when no NODE is given.
            if (!(server == 2 && (source[0] == 0 || source[0] == '-'))) snprintf(device, size, "%s", source);
        }
        const char *address = NULL;
        serverName[0] = 0;
        if (snd_config_search(definition, "server", &node) >= 0 && snd_config_get_string(node, &address) >= 0 && address != NULL)
            snprintf(serverName, serverSize, "%s", address);
        return server;
    }
    if (strcmp(type, "file") == 0 && snd_config_search(definition, "infile", &node) >= 0) return 0;
    snd_config_t *slave = NULL;
    if (snd_config_search(definition, strcmp(type, "asym") == 0 ? "capture.pcm" : "slave.pcm", &slave) < 0) return 0;
    if (snd_config_get_type(slave) == SND_CONFIG_TYPE_COMPOUND)
        return hark_alsa_definition_server(slave, device, size, serverName, serverSize, depth + 1);
    const char *name = NULL;
    snd_config_t *next = NULL;
    if (snd_config_get_string(slave, &name) < 0 || name == NULL) return 0;
    if (snd_config_search_definition(snd_config, "pcm", name, &next) < 0) return 0;
    int result = hark_alsa_definition_server(next, device, size, serverName, serverSize, depth + 1);
    snd_config_delete(next);
    return result;
}

// `hark_alsa_definition_server` for the PCM `name`, after ALSA's configuration is expanded. Opens
// nothing.
static inline int hark_alsa_pcm_server_behind(const char *name, char *device, size_t size, char *serverName, size_t serverSize) {
    if (size == 0 || serverSize == 0 || snd_config_update() < 0 || snd_config == NULL) return 0;
    device[0] = 0;
    serverName[0] = 0;
    snd_config_t *definition = NULL;
    if (snd_config_search_definition(snd_config, "pcm", name, &definition) < 0) return 0;
    int result = hark_alsa_definition_server(definition, device, size, serverName, serverSize, 0);
    snd_config_delete(definition);
    return result;
}

#endif
