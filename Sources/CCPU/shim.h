// What the processor can run, for code compiled twice (Sources/LoudnessKernelsAVX2): header only,
// the CPUID and XGETBV instructions themselves.
#ifndef HARK_CCPU_SHIM_H
#define HARK_CCPU_SHIM_H

#if defined(__x86_64__)
#include <cpuid.h>

// 1 when the processor has AVX2 and FMA and the kernel saves the AVX registers across context
// switches (without that, AVX instructions fault even on a processor that has them).
static inline int hark_cpu_has_avx2_and_fma(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    const unsigned int fma = 1u << 12, osxsave = 1u << 27, avx = 1u << 28;
    if ((ecx & (fma | osxsave | avx)) != (fma | osxsave | avx)) return 0;
    unsigned int low, high;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    if ((low & 6) != 6) return 0;  // XCR0: the XMM (bit 1) and YMM (bit 2) state is saved
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    return (ebx & (1u << 5)) != 0;  // AVX2
}
#else
static inline int hark_cpu_has_avx2_and_fma(void) { return 0; }
#endif

#endif
