// The CPU queue's command processor: it executes a command buffer's host packets (runtime/hcq.py has their format) as a
// GPU's front end executes its ring, with no Python between them.
//
// pytc_queue_scan(buffer, nbytes, timeline, &last) says whether the buffer waits on a signal and the highest value it
// signals `timeline` with (what the queue needs before it admits the buffer). pytc_queue_run(buffer, nbytes, &offset,
// timeout_ns) executes the packets from `offset` on and stops at the end, just after a SIGNAL (the host's waiters are woken
// between two calls), at a packet that is not whole, or at a WAIT that outlasted `timeout_ns`; `offset` is then where it
// stopped. A launch of `slices` > 1 runs on all cores (parallel.c): its kernel's last two arguments are the [begin, end) of
// its outermost parallel range, cut into that many consecutive parts.
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hcq_codes.h"

typedef void (*kernel_fn)(void **);
void pytc_parallel_run(kernel_fn kernel, void **args, int count);

static const uint32_t payload_bytes[OPS] = {[EXEC] = 40, [SIGNAL] = 16, [WAIT] = 16, [TIMESTAMP] = 8, [BARRIER] = 0, [COPY] = 24};

typedef struct {
  _Atomic uint64_t value;
  uint64_t timestamp_ns;
} signal_memory;

static uint64_t field(const uint8_t *payload, int index) {
  uint64_t value;
  memcpy(&value, payload + 8 * index, 8);
  return value;
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// The packet at `offset`: its opcode and payload, or 0 when it is not whole (unknown opcode, wrong size, past the end).
static uint32_t packet_at(const uint8_t *buffer, uint64_t nbytes, uint64_t offset, const uint8_t **payload) {
  uint32_t header[2];
  if (offset + 8 > nbytes) return 0;
  memcpy(header, buffer + offset, 8);
  if (header[0] == 0 || header[0] >= OPS || header[1] != 8 + payload_bytes[header[0]] || offset + header[1] > nbytes) return 0;
  *payload = buffer + offset + 8;
  return header[0];
}

int pytc_queue_scan(const uint8_t *buffer, uint64_t nbytes, uint64_t timeline, uint64_t *last) {
  const uint8_t *payload;
  int waits = 0;
  *last = 0;
  for (uint64_t offset = 0, op; offset < nbytes && (op = packet_at(buffer, nbytes, offset, &payload)); offset += 8 + payload_bytes[op]) {
    if (op == WAIT) waits = 1;
    if (op == SIGNAL && field(payload, 0) == timeline && field(payload, 1) > *last) *last = field(payload, 1);
  }
  return waits;
}

// The launch's argument block: its count n, n pointers to the values, the n values (see Kernargs in ops_cpu.py).
static int run_split(kernel_fn kernel, const uint64_t *block, uint32_t slices) {
  uint64_t n = block[0], words = 1 + 2 * n;
  const uint64_t *values = block + 1 + n;
  uint64_t begin = values[n - 2], end = values[n - 1];
  uint64_t *blocks = malloc(slices * words * sizeof(uint64_t));
  void **parts = malloc(slices * sizeof(void *));
  if (blocks == 0 || parts == 0) {
    free(blocks), free(parts);
    return NO_MEMORY;
  }
  int count = 0;
  for (uint32_t i = 0; i < slices; i++) {
    uint64_t lo = begin + (end - begin) * i / slices, hi = begin + (end - begin) * (i + 1) / slices;
    if (hi <= lo) continue;
    uint64_t *part = blocks + count * words;
    part[0] = n;
    for (uint64_t j = 0; j < n; j++) part[1 + j] = (uint64_t)(uintptr_t)(part + 1 + n + j), part[1 + n + j] = values[j];
    part[words - 2] = lo, part[words - 1] = hi;
    parts[count++] = part + 1;
  }
  pytc_parallel_run(kernel, parts, count);
  free(blocks), free(parts);
  return DONE;
}

static int wait_for(signal_memory *signal, uint64_t value, int64_t timeout_ns) {
  int64_t deadline = now_ns() + timeout_ns;
  for (int spins = 0; atomic_load(&signal->value) < value; spins++) {
    if (now_ns() > deadline) return TIMED_OUT;
    if (spins < 1000) sched_yield();
    else nanosleep(&(struct timespec){0, 100000}, 0);
  }
  return DONE;
}

int pytc_queue_run(const uint8_t *buffer, uint64_t nbytes, uint64_t *offset, int64_t timeout_ns) {
  const uint8_t *payload;
  while (*offset < nbytes) {
    uint32_t op = packet_at(buffer, nbytes, *offset, &payload), status = DONE;
    if (op == 0) return MALFORMED;
    if (op == EXEC) {
      kernel_fn kernel = (kernel_fn)(uintptr_t)field(payload, 0);
      uint64_t *block = (uint64_t *)(uintptr_t)field(payload, 1);
      uint32_t slices;
      memcpy(&slices, payload + 16, 4);
      if (slices <= 1) kernel((void **)(block + 1));
      else status = run_split(kernel, block, slices);
    } else if (op == SIGNAL) {
      atomic_store(&((signal_memory *)(uintptr_t)field(payload, 0))->value, field(payload, 1));
      status = SIGNALED;
    } else if (op == WAIT) status = wait_for((signal_memory *)(uintptr_t)field(payload, 0), field(payload, 1), timeout_ns);
    else if (op == TIMESTAMP) ((signal_memory *)(uintptr_t)field(payload, 0))->timestamp_ns = (uint64_t)now_ns();
    else if (op == COPY) memmove((void *)(uintptr_t)field(payload, 0), (void *)(uintptr_t)field(payload, 1), field(payload, 2));
    if (status != DONE && status != SIGNALED) return status;  // BARRIER: packets already run in order
    *offset += 8 + payload_bytes[op];
    if (status == SIGNALED) return SIGNALED;
  }
  return DONE;
}
