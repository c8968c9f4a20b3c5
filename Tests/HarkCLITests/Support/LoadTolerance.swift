import Foundation

/// How much slower than an unloaded, uninstrumented run this test process may expect to be.
///
/// Use it ONLY for promises that really are about wall-clock time (a page reaches a pipe reader
/// within the maximum delay, a refusal comes at once, a stop ends the process within a bound):
/// scale the slack in such a bound, never the promise's own figure. Everything else must wait for
/// an observable state (a file growing, a process exiting, a line on stderr) with a generous
/// deadline, not sleep for a guessed time: "assert the promise, not a lucky schedule".
///
/// `slowdown` is 1 normally and 3 when the test process runs under AddressSanitizer or
/// ThreadSanitizer (`swift test --sanitize=…` instruments the test runner and the hark binary
/// alike, so the runner's own instrumentation says that hark is instrumented too). The environment
/// variable `HARK_TEST_SLOWDOWN` (a number ≥ 1) overrides it, for a machine known to be slow.
enum TestLoad {
    static let slowdown: Double = {
        if let text = ProcessInfo.processInfo.environment["HARK_TEST_SLOWDOWN"], let value = Double(text), value >= 1 {
            return value
        }
        return sanitizer == nil ? 1 : 3
    }()

    /// The sanitizer this test process runs under ("address" or "thread"), or nil.
    static let sanitizer: String? = {
        let process = dlopen(nil, RTLD_NOW)
        if dlsym(process, "__asan_init") != nil { return "address" }
        if dlsym(process, "__tsan_init") != nil { return "thread" }
        return nil
    }()

    /// `seconds` scaled by `slowdown`: the slack in a wall-clock bound, or a deadline for a wait.
    static func seconds(_ seconds: Double) -> Double { seconds * slowdown }
}
