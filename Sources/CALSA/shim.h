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

#endif
