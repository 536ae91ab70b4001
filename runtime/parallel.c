// The CPU device's core threads: run the slices of one kernel launch on all cores without the Python GIL.
//
// pytc_parallel_run(kernel, args, count) calls kernel(args[i]) for i in [0, count): the calling thread and
// the pool's threads take slices from a shared counter until none is left, then the caller waits for the
// last one. Between launches a pool thread polls for the next one for POLL_NS (a wake-up from sleep costs
// more than a small kernel runs; much longer would take the cores from other programs), then sleeps on a
// condition variable. Waits shorter than SPIN_NS spin on the CPU's pause hint, which sees the change within
// nanoseconds; past it they call sched_yield (a system call: a microsecond, and a runnable thread goes first).
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

typedef void (*kernel_fn)(void **);

enum { CLOSED = 1 << 30 };
static const int64_t POLL_NS = 1000000;  // how long a thread polls for the next launch before it sleeps
static const int64_t SPIN_NS = 50000;    // how long a wait spins before it yields the core

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// One turn of a wait that began at `start`: false once it has lasted `limit_ns`.
static int keep_waiting(int64_t start, int64_t limit_ns) {
  int64_t waited = now_ns() - start;
  if (waited >= limit_ns) return 0;
  if (waited >= SPIN_NS) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
  else __builtin_ia32_pause();
#elif defined(__aarch64__)
  else __asm__ volatile("yield");
#endif
  return 1;
}

static pthread_mutex_t launching = PTHREAD_MUTEX_INITIALIZER;  // one launch at a time, from any device

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  atomic_uint_fast64_t generation;  // bumped by every launch
  atomic_int next, done, sleepers, threads;
  kernel_fn kernel;
  void **args;
  int count;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void take_slices(void) {
  for (int i; (i = atomic_fetch_add(&pool.next, 1)) < pool.count;) {
    pool.kernel((void **)pool.args[i]);
    atomic_fetch_add(&pool.done, 1);
  }
}

static void *serve(void *unused) {
  (void)unused;
  uint_fast64_t seen = atomic_load(&pool.generation);
  for (;;) {
    for (int64_t start = now_ns(); atomic_load(&pool.generation) == seen && keep_waiting(start, POLL_NS);) continue;
    if (atomic_load(&pool.generation) == seen) {
      pthread_mutex_lock(&pool.lock);
      atomic_fetch_add(&pool.sleepers, 1);
      while (atomic_load(&pool.generation) == seen) pthread_cond_wait(&pool.wake, &pool.lock);
      atomic_fetch_sub(&pool.sleepers, 1);
      pthread_mutex_unlock(&pool.lock);
    }
    seen = atomic_load(&pool.generation);
    take_slices();
  }
  return 0;
}

// Start `threads` pool threads (once; later calls return the number running). Returns -1 if none could start.
int pytc_parallel_start(int threads) {
  pthread_mutex_lock(&pool.lock);
  for (int started = atomic_load(&pool.threads); started < threads; started++) {
    pthread_t thread;
    if (pthread_create(&thread, 0, serve, 0) != 0) break;
    pthread_detach(thread);
    atomic_fetch_add(&pool.threads, 1);
  }
  pthread_mutex_unlock(&pool.lock);
  return atomic_load(&pool.threads) ? atomic_load(&pool.threads) : -1;
}

// Run kernel(args[i]) for every i < count; concurrent callers take turns.
void pytc_parallel_run(kernel_fn kernel, void **args, int count) {
  pthread_mutex_lock(&launching);
  atomic_store(&pool.next, CLOSED);  // a thread still leaving the last launch takes no slice of this one
  pool.kernel = kernel, pool.args = args, pool.count = count;
  atomic_store(&pool.done, 0);
  atomic_store(&pool.next, 0);
  pthread_mutex_lock(&pool.lock);
  atomic_fetch_add(&pool.generation, 1);
  if (atomic_load(&pool.sleepers)) pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.lock);
  take_slices();
  for (int64_t start = now_ns(); atomic_load(&pool.done) < count;) keep_waiting(start, INT64_MAX);
  pthread_mutex_unlock(&launching);
}
