// Counts malloc, calloc and realloc calls made on hark's capture and encoder threads (by thread
// name), and prints the counts when the process exits. Loaded with LD_PRELOAD by
// Benchmarks/Tools/thread-mallocs: a recording whose counts do not grow with its length allocates
// nothing per period, libraries' own allocations (libpulse, ALSA's plugins) included, which the
// package-benchmark allocation thresholds (hark's code alone, without a sound server) cannot see.
// The first few calloc calls, made while dlsym itself looks calloc up, come from a static buffer.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <stdatomic.h>
static atomic_long count_capture, count_encode;
static __thread int in_hook;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t,size_t);
static void *(*real_realloc)(void*,size_t);
static void tally(void){ if(in_hook) return; in_hook=1; char n[16]={0}; pthread_getname_np(pthread_self(), n, sizeof n);
  if(!strcmp(n,"hark-capture")) atomic_fetch_add(&count_capture,1); else if(!strcmp(n,"hark-encode")) atomic_fetch_add(&count_encode,1); in_hook=0; }
void *malloc(size_t s){ if(!real_calloc) real_calloc=dlsym(RTLD_NEXT,"calloc"); if(!real_malloc) real_malloc=dlsym(RTLD_NEXT,"malloc"); tally(); return real_malloc(s); }
static char boot[4096]; static size_t bootUsed;
void *calloc(size_t n,size_t s){ if(!real_calloc){ if(bootUsed+n*s<=sizeof boot){ void*p=boot+bootUsed; bootUsed+=n*s; return p;} } if(!real_calloc) real_calloc=dlsym(RTLD_NEXT,"calloc"); tally(); return real_calloc(n,s); }
void *realloc(void*p,size_t s){ if(!real_realloc) real_realloc=dlsym(RTLD_NEXT,"realloc"); tally(); return real_realloc(p,s); }
__attribute__((destructor)) static void report(void){ fprintf(stderr,"MALLOC capture=%ld encode=%ld\n", (long)count_capture, (long)count_encode); }
