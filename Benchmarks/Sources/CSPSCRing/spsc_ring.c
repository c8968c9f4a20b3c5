#include "spsc_ring.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

// 128 bytes: two cache lines, so adjacent-line prefetch does not couple the two sides.
#define LINE 128

struct spsc_ring {
    // Producer's line: its index and its cached copy of the consumer's.
    _Alignas(LINE) _Atomic size_t write_index;
    size_t cached_read_index;
    // Consumer's line.
    _Alignas(LINE) _Atomic size_t read_index;
    size_t cached_write_index;
    // Shared, read-only after creation.
    _Alignas(LINE) unsigned char *storage;
    size_t capacity;
    size_t mask;
    size_t bytes_per_frame;
};

spsc_ring *spsc_ring_create(size_t min_frames, size_t bytes_per_frame) {
    size_t capacity = 1;
    while (capacity < min_frames) capacity <<= 1;
    spsc_ring *ring = aligned_alloc(LINE, sizeof(spsc_ring));
    if (!ring) return NULL;
    ring->storage = aligned_alloc(LINE, (capacity * bytes_per_frame + LINE - 1) / LINE * LINE);
    if (!ring->storage) { free(ring); return NULL; }
    memset(ring->storage, 0, capacity * bytes_per_frame);
    atomic_init(&ring->write_index, 0);
    atomic_init(&ring->read_index, 0);
    ring->cached_read_index = 0;
    ring->cached_write_index = 0;
    ring->capacity = capacity;
    ring->mask = capacity - 1;
    ring->bytes_per_frame = bytes_per_frame;
    return ring;
}

void spsc_ring_destroy(spsc_ring *ring) {
    free(ring->storage);
    free(ring);
}

// Copies `frames` frames between the ring slot `index` and linear memory, in up to two parts.
static void copy_in(spsc_ring *ring, size_t index, const unsigned char *source, size_t frames) {
    size_t slot = index & ring->mask;
    size_t first = frames < ring->capacity - slot ? frames : ring->capacity - slot;
    memcpy(ring->storage + slot * ring->bytes_per_frame, source, first * ring->bytes_per_frame);
    memcpy(ring->storage, source + first * ring->bytes_per_frame, (frames - first) * ring->bytes_per_frame);
}

static void copy_out(spsc_ring *ring, size_t index, unsigned char *destination, size_t frames) {
    size_t slot = index & ring->mask;
    size_t first = frames < ring->capacity - slot ? frames : ring->capacity - slot;
    memcpy(destination, ring->storage + slot * ring->bytes_per_frame, first * ring->bytes_per_frame);
    memcpy(destination + first * ring->bytes_per_frame, ring->storage, (frames - first) * ring->bytes_per_frame);
}

size_t spsc_ring_write(spsc_ring *ring, const void *source, size_t frames) {
    size_t write = atomic_load_explicit(&ring->write_index, memory_order_relaxed);
    size_t free_frames = ring->capacity - (write - ring->cached_read_index);
    if (free_frames < frames) {
        // Acquire: the consumer's reads of released slots happen before we overwrite them.
        ring->cached_read_index = atomic_load_explicit(&ring->read_index, memory_order_acquire);
        free_frames = ring->capacity - (write - ring->cached_read_index);
    }
    size_t count = frames < free_frames ? frames : free_frames;
    if (count == 0) return 0;
    copy_in(ring, write, source, count);
    // Release: the frames are visible before the index that covers them.
    atomic_store_explicit(&ring->write_index, write + count, memory_order_release);
    return count;
}

size_t spsc_ring_read(spsc_ring *ring, void *destination, size_t frames) {
    size_t read = atomic_load_explicit(&ring->read_index, memory_order_relaxed);
    size_t available = ring->cached_write_index - read;
    if (available < frames) {
        // Acquire: pairs with the producer's release.
        ring->cached_write_index = atomic_load_explicit(&ring->write_index, memory_order_acquire);
        available = ring->cached_write_index - read;
    }
    size_t count = frames < available ? frames : available;
    if (count == 0) return 0;
    copy_out(ring, read, destination, count);
    // Release: our reads of these slots happen before the producer reuses them.
    atomic_store_explicit(&ring->read_index, read + count, memory_order_release);
    return count;
}
