// A C11 single-producer/single-consumer ring of fixed-size frames: the yardstick hark's Swift
// FrameRingBuffer is measured against. Same design as rigtorp/SPSCQueue: power-of-two capacity,
// free-running indices on separate cache lines, each side caching the other's index,
// acquire/release ordering only, copies in at most two parts.
#ifndef HARK_SPSC_RING_H
#define HARK_SPSC_RING_H

#include <stddef.h>

typedef struct spsc_ring spsc_ring;

// Capacity is rounded up to a power of two frames. Returns NULL when out of memory.
spsc_ring *spsc_ring_create(size_t min_frames, size_t bytes_per_frame);
void spsc_ring_destroy(spsc_ring *ring);

// Producer: copies as many whole frames of `frames` as fit; returns the frames written.
size_t spsc_ring_write(spsc_ring *ring, const void *source, size_t frames);
// Consumer: copies up to `frames` frames out; returns the frames read.
size_t spsc_ring_read(spsc_ring *ring, void *destination, size_t frames);

#endif
