// hark-privacy-switch: reads the desktop's microphone switch (GNOME's Settings › Privacy ›
// Microphone, GSettings `org.gnome.desktop.privacy disable-microphone`) through GLib's own GSettings
// client library, for hark's permission gate.
//
// Why a separate process: GIO and its dependencies add about 4.5 MiB of resident memory once loaded
// and a GSettings object exists, and GLib starts worker threads of its own. In the recorder that
// would break its 16 MiB memory target and put foreign threads beside the real-time ones; here they
// cost a small process that only sleeps in GLib's main loop.
//
// Protocol (stdout, one byte per reading, written when it changes):
//   '1'  the switch is off: the desktop forbids microphone use
//   '0'  the switch is on
//   'x'  there is no such switch here (GIO missing, schema or key not installed); then it exits
// It exits when its stdin reaches end-of-file or hangs up: hark keeps the other end of that pipe
// open for as long as it wants readings, and the kernel closes it when hark exits in any way.
// With --once it writes the first reading and exits.
//
// GIO is opened with dlopen, through the few prototypes below (GLib's own ABI, stable since
// 2.32), so building hark needs no GLib headers and a machine without GLib simply has no switch.
#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

typedef int gboolean;
typedef void *gpointer;
enum { G_IO_IN = 1, G_IO_ERR = 8, G_IO_HUP = 16 };

static const char schema_id[] = "org.gnome.desktop.privacy";
static const char key[] = "disable-microphone";

static struct {
    void *(*schema_source_get_default)(void);
    void *(*schema_source_lookup)(void *source, const char *id, gboolean recursive);
    gboolean (*schema_has_key)(void *schema, const char *name);
    void *(*settings_new_full)(void *schema, void *backend, const char *path);
    gboolean (*settings_get_boolean)(void *settings, const char *name);
    unsigned long (*signal_connect_data)(gpointer instance, const char *signal, void (*handler)(void),
                                         gpointer data, void *destroy, int flags);
    void *(*main_loop_new)(void *context, gboolean running);
    void (*main_loop_run)(void *loop);
    void (*main_loop_quit)(void *loop);
    unsigned (*unix_fd_add)(int fd, int condition, gboolean (*handler)(int, int, gpointer), gpointer data);
} gio;

static char last_reading;

static void report(char reading) {
    if (reading == last_reading) return;
    last_reading = reading;
    // A failed write means hark is gone; the stdin watch ends the loop.
    (void)!write(STDOUT_FILENO, &reading, 1);
}

static void on_changed(void *settings, const char *changed_key, gpointer data) {
    (void)changed_key;
    (void)data;
    report(gio.settings_get_boolean(settings, key) ? '1' : '0');
}

static gboolean on_stdin(int fd, int condition, gpointer loop) {
    char scratch[64];
    if ((condition & G_IO_IN) && read(fd, scratch, sizeof scratch) > 0) return 1;  // not ours to read; keep watching
    gio.main_loop_quit(loop);
    return 0;
}

static bool load(void) {
    void *library = dlopen("libgio-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) return false;
#define RESOLVE(field, symbol) if (!(*(void **)&gio.field = dlsym(library, symbol))) return false
    RESOLVE(schema_source_get_default, "g_settings_schema_source_get_default");
    RESOLVE(schema_source_lookup, "g_settings_schema_source_lookup");
    RESOLVE(schema_has_key, "g_settings_schema_has_key");
    RESOLVE(settings_new_full, "g_settings_new_full");
    RESOLVE(settings_get_boolean, "g_settings_get_boolean");
    RESOLVE(signal_connect_data, "g_signal_connect_data");
    RESOLVE(main_loop_new, "g_main_loop_new");
    RESOLVE(main_loop_run, "g_main_loop_run");
    RESOLVE(main_loop_quit, "g_main_loop_quit");
    RESOLVE(unix_fd_add, "g_unix_fd_add");
#undef RESOLVE
    return true;
}

int main(int argc, char **argv) {
    // Ends with hark even while GIO is still loading (stdin's end is only seen in the main loop):
    // hark keeps a helper that answers late, and must not leave one behind. (The signal comes when
    // the thread that started the helper ends: hark's main thread, which ends with hark.)
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    bool once = argc > 1 && strcmp(argv[1], "--once") == 0;
    void *source = load() ? gio.schema_source_get_default() : NULL;
    // Looked up first, because g_settings_new() aborts the process for a schema that is not installed.
    void *schema = source ? gio.schema_source_lookup(source, schema_id, 1) : NULL;
    if (!schema || !gio.schema_has_key(schema, key)) {
        report('x');
        return 0;
    }
    void *settings = gio.settings_new_full(schema, NULL, NULL);
    // Connected before the first read: GSettings only promises change signals for keys read after
    // the handler exists, so no change between the read and the connection is missed.
    gio.signal_connect_data(settings, "changed::disable-microphone", (void (*)(void))on_changed, NULL, NULL, 0);
    report(gio.settings_get_boolean(settings, key) ? '1' : '0');
    if (once) return 0;
    void *loop = gio.main_loop_new(NULL, 0);
    gio.unix_fd_add(STDIN_FILENO, G_IO_IN | G_IO_HUP | G_IO_ERR, on_stdin, loop);
    gio.main_loop_run(loop);
    return 0;
}
