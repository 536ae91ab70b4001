/* A stand-in for libcuda.so.1 that the NV device's tests load through PYTC_LIBCUDA: the driver entry points runtime/ops_nv.py
 * uses, with the real signatures, enum values and CUresult codes, over host memory.
 *
 * - Device memory is malloc'd host memory (256-byte aligned): a CUdeviceptr is a host pointer, copies are memcpy. Every
 *   pointer given to a copy, a stream memory operation or (as a kernel parameter) a launch must lie in a live allocation.
 * - cuMemHostAlloc is page-aligned host memory; its device pointer (cuMemHostGetDevicePointer) is NOT the host address but
 *   the host address with bit 62 set, so a caller that hands the GPU a host address is caught (CUDA_ERROR_INVALID_VALUE).
 * - A module keeps the PTX text; cuModuleGetFunction finds `.entry NAME(` in it (else CUDA_ERROR_NOT_FOUND) and reads the
 *   kernel's parameter count and `.maxntid`. A PTX whose `.target sm_XY` is newer than the device fails with
 *   CUDA_ERROR_INVALID_PTX and a message in the CU_JIT_ERROR_LOG_BUFFER. An ELF image (a cubin) holds kernels by name.
 * - No kernel code runs: cuLaunchKernel checks its arguments and records the launch (kernel name, grid, block, the u64
 *   values its kernelParams point to), read back with fake_launches(). A parameter outside every allocation faults the
 *   way a kernel's illegal access does: the stream stops there, and from the next cuStreamQuery or cuEventQuery on every
 *   call returns CUDA_ERROR_ILLEGAL_ADDRESS (a sticky error: the context is lost).
 * - Streams run their work at once, in order. cuStreamWriteValue64_v2 writes immediately; cuStreamWaitValue64_v2 checks
 *   immediately, and when unmet the stream is stuck for good: everything queued on it later is dropped, its events never
 *   complete, cuStreamQuery says CUDA_ERROR_NOT_READY.
 * - Events complete when recorded on a stream that is not stuck, at CLOCK_MONOTONIC's time.
 * - Environment: FAKE_CUDA_CC (compute capability, default "9.0"), FAKE_CUDA_DEVICES (default 1), FAKE_CUDA_MEMORY (bytes
 *   cuMemAlloc grants at once, default 16 GiB). fake_reset() clears the launch log and a fault. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2, CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_INVALID_DEVICE = 101, CUDA_ERROR_INVALID_IMAGE = 200, CUDA_ERROR_INVALID_CONTEXT = 201, CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400, CUDA_ERROR_NOT_FOUND = 500, CUDA_ERROR_NOT_READY = 600, CUDA_ERROR_ILLEGAL_ADDRESS = 700,
};
#define MAPPED_BIT (1ULL << 62)
#define MAX_PARAMS 16

static const struct { int code; const char *name, *text; } ERRORS[] = {
  {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
  {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
  {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
  {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
  {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
  {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
  {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
  {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
  {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
  {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
  {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
  {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
};

struct allocation { uint64_t base, size; int host; struct allocation *next; };
struct function { uint32_t magic; char name[64]; int params; unsigned maxntid; struct function *next; };
struct module { uint32_t magic; char *image; size_t size; struct function *functions; };
struct stream { uint32_t magic; int stuck; };
struct event { uint32_t magic; int recorded, pending; uint64_t ns; };
typedef struct { char name[64]; unsigned grid[3], block[3]; int params; unsigned long long values[MAX_PARAMS]; } fake_launch;

enum { FUNCTION = 0xF00C, MODULE = 0x30D, STREAM = 0x57E, EVENT = 0xE7E };
static int initialized, live_modules;
static CUresult sticky;  /* the error of a faulted context, returned by every later call */
static int faulted;  /* a launch faulted: the next query makes the error sticky */
static struct allocation *allocations;
static fake_launch *launches;
static int launch_count, launch_capacity;
static char primary_contexts[8];
static __thread void *current;

static int env_int(const char *name, int fallback) { const char *v = getenv(name); return v ? atoi(v) : fallback; }
static void compute_capability(int *major, int *minor) {
  const char *v = getenv("FAKE_CUDA_CC");
  if (!v || sscanf(v, "%d.%d", major, minor) != 2) *major = 9, *minor = 0;
}
static uint64_t now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec; }

#define CHECK_CONTEXT() do { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; if (sticky) return sticky; \
                             if (!current) return CUDA_ERROR_INVALID_CONTEXT; } while (0)

/* The allocation holding [address, address + size), or NULL: device memory by its device address, mapped host memory by
 * its device address (bit 62 set), or with `host` by its host address. */
static struct allocation *find(uint64_t address, uint64_t size, int host) {
  int mapped = (address & MAPPED_BIT) != 0;
  if (mapped && !host) address &= ~MAPPED_BIT;
  for (struct allocation *a = allocations; a; a = a->next)
    if (a->host == (mapped || host) && address >= a->base && address + size <= a->base + a->size) return a;
  return NULL;
}
static void *host_of(CUdeviceptr pointer) { return (void *)(uintptr_t)(pointer & ~MAPPED_BIT); }
static struct allocation *track(void *memory, uint64_t size, int host) {
  struct allocation *a = calloc(1, sizeof *a);
  a->base = (uint64_t)(uintptr_t)memory, a->size = size, a->host = host, a->next = allocations;
  return allocations = a;
}
static int untrack(uint64_t base, int host) {
  for (struct allocation **a = &allocations; *a; a = &(*a)->next)
    if ((*a)->base == base && (*a)->host == host) { struct allocation *gone = *a; *a = gone->next; free(gone); return 1; }
  return 0;
}
static struct stream *as_stream(void *s) { struct stream *p = s; return p && p->magic == STREAM ? p : NULL; }
static struct event *as_event(void *e) { struct event *p = e; return p && p->magic == EVENT ? p : NULL; }

CUresult cuGetErrorName(CUresult error, const char **name) {
  for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++) if (ERRORS[i].code == error) { *name = ERRORS[i].name; return 0; }
  *name = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuGetErrorString(CUresult error, const char **text) {
  for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++) if (ERRORS[i].code == error) { *text = ERRORS[i].text; return 0; }
  *text = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuInit(unsigned flags) { if (flags) return CUDA_ERROR_INVALID_VALUE; initialized = 1; return 0; }
CUresult cuDriverGetVersion(int *version) { *version = 12040; return 0; }
CUresult cuDeviceGetCount(int *count) { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; *count = env_int("FAKE_CUDA_DEVICES", 1); return 0; }
CUresult cuDeviceGet(int *device, int ordinal) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || ordinal >= env_int("FAKE_CUDA_DEVICES", 1) || ordinal >= 8) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (device < 0 || device >= env_int("FAKE_CUDA_DEVICES", 1)) return CUDA_ERROR_INVALID_DEVICE;
  int major, minor;
  compute_capability(&major, &minor);
  if (attribute == 75) *value = major;       /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
  else if (attribute == 76) *value = minor;  /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */
  else return CUDA_ERROR_INVALID_VALUE;
  return 0;
}
CUresult cuDeviceGetName(char *name, int length, int device) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (device < 0 || device >= env_int("FAKE_CUDA_DEVICES", 1)) return CUDA_ERROR_INVALID_DEVICE;
  snprintf(name, length, "Fake CUDA device %d", device);
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (device < 0 || device >= env_int("FAKE_CUDA_DEVICES", 1)) return CUDA_ERROR_INVALID_DEVICE;
  *context = &primary_contexts[device];
  return 0;
}
CUresult cuCtxSetCurrent(void *context) { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; current = context; return 0; }

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t size) {
  CHECK_CONTEXT();
  if (size == 0) return CUDA_ERROR_INVALID_VALUE;
  const char *limit = getenv("FAKE_CUDA_MEMORY");
  if (size > (limit ? strtoull(limit, NULL, 10) : 16ull << 30)) return CUDA_ERROR_OUT_OF_MEMORY;
  void *memory = aligned_alloc(256, (size + 255) & ~(size_t)255);
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  track(memory, size, 0);
  *pointer = (uint64_t)(uintptr_t)memory;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  CHECK_CONTEXT();
  if (!untrack(pointer, 0)) return CUDA_ERROR_INVALID_VALUE;
  free((void *)(uintptr_t)pointer);
  return 0;
}
CUresult cuMemHostAlloc(void **pointer, size_t size, unsigned flags) {
  CHECK_CONTEXT();
  if (size == 0 || flags & ~7u) return CUDA_ERROR_INVALID_VALUE;
  void *memory = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
  if (!memory) return CUDA_ERROR_OUT_OF_MEMORY;
  track(memory, flags & 2 ? size : 0, 1);  /* not mapped without CU_MEMHOSTALLOC_DEVICEMAP: no device pointer into it */
  *pointer = memory;
  return 0;
}
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *device, void *host, unsigned flags) {
  CHECK_CONTEXT();
  if (flags || !find((uint64_t)(uintptr_t)host, 1, 1)) return CUDA_ERROR_INVALID_VALUE;
  *device = (uint64_t)(uintptr_t)host | MAPPED_BIT;
  return 0;
}
CUresult cuMemFreeHost(void *host) {
  CHECK_CONTEXT();
  if (!untrack((uint64_t)(uintptr_t)host, 1)) return CUDA_ERROR_INVALID_VALUE;
  free(host);
  return 0;
}

static CUresult copy(void *destination, const void *source, size_t size, void *stream) {
  struct stream *s = as_stream(stream);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  if (!s->stuck && size) memcpy(destination, source, size);
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr destination, const void *source, size_t size, void *stream) {
  CHECK_CONTEXT();
  if (size && !find(destination, size, 0)) return CUDA_ERROR_INVALID_VALUE;
  return copy(host_of(destination), source, size, stream);
}
CUresult cuMemcpyDtoHAsync_v2(void *destination, CUdeviceptr source, size_t size, void *stream) {
  CHECK_CONTEXT();
  if (size && !find(source, size, 0)) return CUDA_ERROR_INVALID_VALUE;
  return copy(destination, host_of(source), size, stream);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr destination, CUdeviceptr source, size_t size, void *stream) {
  CHECK_CONTEXT();
  if (size && (!find(destination, size, 0) || !find(source, size, 0))) return CUDA_ERROR_INVALID_VALUE;
  return copy(host_of(destination), host_of(source), size, stream);
}

/* The kernel NAME of a PTX text: its parameter count and .maxntid (1024 when it gives none), or 0 when it has no such entry. */
static int ptx_entry(const char *ptx, const char *name, int *params, unsigned *maxntid) {
  char pattern[96];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  const char *at = strstr(ptx, pattern);
  if (!at) return 0;
  const char *open = at + strlen(pattern), *close = strchr(open, ')'), *body = close ? strchr(close, '{') : NULL;
  if (!body) return 0;
  *params = 0;
  for (const char *p = open; (p = strstr(p, ".param")) && p < close; p += 6) ++*params;
  const char *limit = strstr(close, ".maxntid");
  *maxntid = limit && limit < body ? (unsigned)strtoul(limit + 8, NULL, 10) : 1024;
  return 1;
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned count, int *options, void **values) {
  CHECK_CONTEXT();
  if (!image || (count && (!options || !values))) return CUDA_ERROR_INVALID_VALUE;
  char *log = NULL;
  size_t log_size = 0, log_slot = count;
  for (unsigned i = 0; i < count; i++) {
    if (options[i] == 5) log = values[i];                                           /* CU_JIT_ERROR_LOG_BUFFER */
    else if (options[i] == 6) log_size = (size_t)(uintptr_t)values[i], log_slot = i;  /* ..._SIZE_BYTES (in, then out) */
  }
  const unsigned char *bytes = image;
  size_t size;
  if (!memcmp(bytes, "\177ELF", 4)) {  /* a cubin: its size from the ELF header (section headers last) */
    uint64_t shoff; uint16_t shentsize, shnum;
    memcpy(&shoff, bytes + 0x28, 8), memcpy(&shentsize, bytes + 0x3A, 2), memcpy(&shnum, bytes + 0x3C, 2);
    size = shoff + (size_t)shentsize * shnum;
    if (size < 64) return CUDA_ERROR_INVALID_IMAGE;
  } else {
    const char *ptx = image, *target = strstr(ptx, ".target sm_");
    int major, minor, wanted = target ? atoi(target + 11) : 0;
    compute_capability(&major, &minor);
    const char *problem = !strstr(ptx, ".version") ? "no .version directive: not PTX"
                        : !target ? "no .target directive"
                        : wanted > major * 10 + minor ? "SM version specified by .target is higher than default SM version assumed" : NULL;
    if (problem) {
      if (log && log_size) {
        int written = snprintf(log, log_size, "ptxas application ptx input, line 1; fatal   : %s", problem);
        if (log_slot < count) values[log_slot] = (void *)(uintptr_t)(written < (int)log_size ? (size_t)written + 1 : log_size);
      }
      return CUDA_ERROR_INVALID_PTX;
    }
    size = strlen(ptx) + 1;
  }
  struct module *m = calloc(1, sizeof *m);
  m->magic = MODULE, m->image = malloc(size), m->size = size;
  memcpy(m->image, image, size);
  live_modules++;
  *module = m;
  return 0;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  CHECK_CONTEXT();
  struct module *m = module;
  if (!m || m->magic != MODULE) return CUDA_ERROR_INVALID_HANDLE;
  int params = 0;
  unsigned maxntid = 1024;
  if (!memcmp(m->image, "\177ELF", 4)) {  /* a cubin: any NUL-terminated string naming the kernel */
    size_t length = strlen(name) + 1, i;
    for (i = 0; i + length <= m->size && memcmp(m->image + i, name, length); i++) {}
    if (i + length > m->size) return CUDA_ERROR_NOT_FOUND;
  } else if (!ptx_entry(m->image, name, &params, &maxntid)) return CUDA_ERROR_NOT_FOUND;
  struct function *f = calloc(1, sizeof *f);
  f->magic = FUNCTION, f->params = params, f->maxntid = maxntid, f->next = m->functions;
  snprintf(f->name, sizeof f->name, "%s", name);
  *function = m->functions = f;
  return 0;
}
CUresult cuModuleUnload(void *module) {
  CHECK_CONTEXT();
  struct module *m = module;
  if (!m || m->magic != MODULE) return CUDA_ERROR_INVALID_HANDLE;
  for (struct function *f = m->functions, *next; f; f = next) { next = f->next; f->magic = 0; free(f); }
  m->magic = 0;
  free(m->image), free(m);
  live_modules--;
  return 0;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  CHECK_CONTEXT();
  struct function *f = function;
  struct stream *s = as_stream(stream);
  if (!f || f->magic != FUNCTION || !s) return CUDA_ERROR_INVALID_HANDLE;
  if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > f->maxntid || shared > 49152 || extra ||
      (f->params && !params) || f->params > MAX_PARAMS) return CUDA_ERROR_INVALID_VALUE;
  if (s->stuck) return 0;
  if (launch_count == launch_capacity) launches = realloc(launches, (launch_capacity = 2 * launch_capacity + 16) * sizeof *launches);
  fake_launch *l = &launches[launch_count++];
  memset(l, 0, sizeof *l);
  snprintf(l->name, sizeof l->name, "%s", f->name);
  l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz, l->block[0] = bx, l->block[1] = by, l->block[2] = bz, l->params = f->params;
  for (int i = 0; i < f->params; i++) {
    memcpy(&l->values[i], params[i], 8);
    if (!find(l->values[i], 1, 0)) s->stuck = faulted = 1;  /* the kernel faults: its stream stops, the context is lost */
  }
  return 0;
}

CUresult cuStreamCreate(void **stream, unsigned flags) {
  CHECK_CONTEXT();
  if (flags > 1) return CUDA_ERROR_INVALID_VALUE;
  struct stream *s = calloc(1, sizeof *s);
  s->magic = STREAM;
  *stream = s;
  return 0;
}
CUresult cuStreamDestroy_v2(void *stream) {
  CHECK_CONTEXT();
  struct stream *s = as_stream(stream);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  s->magic = 0;
  free(s);
  return 0;
}
CUresult cuStreamQuery(void *stream) {
  if (faulted) sticky = CUDA_ERROR_ILLEGAL_ADDRESS, faulted = 0;
  CHECK_CONTEXT();
  struct stream *s = as_stream(stream);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  return s->stuck ? CUDA_ERROR_NOT_READY : 0;
}
CUresult cuStreamWriteValue64_v2(void *stream, CUdeviceptr address, uint64_t value, unsigned flags) {
  CHECK_CONTEXT();
  struct stream *s = as_stream(stream);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  if (flags > 1 || address % 8 || !find(address, 8, 0)) return CUDA_ERROR_INVALID_VALUE;
  if (!s->stuck) *(volatile uint64_t *)host_of(address) = value;
  return 0;
}
CUresult cuStreamWaitValue64_v2(void *stream, CUdeviceptr address, uint64_t value, unsigned flags) {
  CHECK_CONTEXT();
  struct stream *s = as_stream(stream);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  if (flags != 0 || address % 8 || !find(address, 8, 0)) return CUDA_ERROR_INVALID_VALUE;  /* only CU_STREAM_WAIT_VALUE_GEQ */
  if (!s->stuck && (int64_t)(*(volatile uint64_t *)host_of(address) - value) < 0) s->stuck = 1;
  return 0;
}

CUresult cuEventCreate(void **event, unsigned flags) {
  CHECK_CONTEXT();
  if (flags & 2) return CUDA_ERROR_INVALID_VALUE;  /* CU_EVENT_DISABLE_TIMING: the NV device needs timing */
  struct event *e = calloc(1, sizeof *e);
  e->magic = EVENT;
  *event = e;
  return 0;
}
CUresult cuEventDestroy_v2(void *event) {
  CHECK_CONTEXT();
  struct event *e = as_event(event);
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  e->magic = 0;
  free(e);
  return 0;
}
CUresult cuEventRecord(void *event, void *stream) {
  CHECK_CONTEXT();
  struct event *e = as_event(event);
  struct stream *s = as_stream(stream);
  if (!e || !s) return CUDA_ERROR_INVALID_HANDLE;
  e->recorded = 1, e->pending = s->stuck, e->ns = now_ns();
  return 0;
}
CUresult cuEventQuery(void *event) {
  if (faulted) sticky = CUDA_ERROR_ILLEGAL_ADDRESS, faulted = 0;
  CHECK_CONTEXT();
  struct event *e = as_event(event);
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  return e->pending ? CUDA_ERROR_NOT_READY : 0;
}
CUresult cuEventElapsedTime(float *milliseconds, void *start, void *end) {
  CHECK_CONTEXT();
  struct event *a = as_event(start), *b = as_event(end);
  if (!a || !b || !a->recorded || !b->recorded) return CUDA_ERROR_INVALID_HANDLE;
  if (a->pending || b->pending) return CUDA_ERROR_NOT_READY;
  *milliseconds = (float)(((double)b->ns - (double)a->ns) / 1e6);
  return 0;
}

/* What the tests read: the launches so far (copies up to `capacity`, returns how many there were), the live allocations of
 * device memory and modules; fake_reset() forgets the launches and clears a sticky error. */
int fake_launches(fake_launch *out, int capacity) {
  if (out) memcpy(out, launches, (size_t)(launch_count < capacity ? launch_count : capacity) * sizeof *launches);
  return launch_count;
}
int fake_live_allocations(void) { int n = 0; for (struct allocation *a = allocations; a; a = a->next) n += !a->host; return n; }
int fake_live_modules(void) { return live_modules; }
void fake_reset(void) { launch_count = 0, sticky = 0, faulted = 0; }
