// Intra-op parallelism: one process-wide pool of worker threads and `parallel_for`.
//
// `parallel_for(n, grain, body)` splits [0, n) into at most num_threads() contiguous chunks of
// at least `grain` iterations and runs `body(begin, end)` on each, the calling thread taking
// the first chunk. Small ranges (n <= grain), calls from inside a parallel region and calls
// while another thread holds the pool run inline on the calling thread, so a kernel never
// waits for the pool and never deadlocks. The first exception a chunk throws is rethrown on
// the calling thread once every chunk has finished.
//
// Determinism: chunk boundaries depend on the thread count. A reduction whose result must not
// depend on it (floating sums) partitions its work with `fixed_blocks` instead and combines
// the per-block partial results in block order.
#pragma once

#include <cstdint>
#include <exception>

namespace plait::cpu {

// Threads used by parallel_for (the calling thread included). Starts at the value of
// OMP_NUM_THREADS, else the number of CPUs this process may run on.
int num_threads();

// Sets the count (clamped to >= 1). Workers are started lazily and kept for reuse.
void set_num_threads(int n);

// True on a pool worker, or on the calling thread while it runs a parallel region.
bool in_parallel_region();

// Grain sizes: below this many elements of simple elementwise work, a thread costs more than
// it saves (waking a worker is a few microseconds).
inline constexpr int64_t kElementwiseGrain = int64_t{1} << 15;

// Chunks per thread of parallel_for_balanced.
inline constexpr int64_t kBalanceChunks = 4;

namespace detail {
using ChunkFn = void (*)(const void* ctx, int64_t begin, int64_t end);
// Runs `fn(ctx, begin, end)` over `chunks` equal chunks of [0, n) (the last one shorter), on
// at most num_threads() threads (the calling thread included) that take chunks in turn.
void run_chunks(int64_t n, int chunks, ChunkFn fn, const void* ctx);

template <class F>
void run_split(int64_t n, int64_t grain, int64_t max_chunks, const F& body) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int64_t chunks = (n + grain - 1) / grain;
  if (chunks > max_chunks) chunks = max_chunks;
  if (chunks <= 1 || num_threads() <= 1 || in_parallel_region()) {
    body(int64_t{0}, n);
    return;
  }
  run_chunks(
      n, static_cast<int>(chunks),
      [](const void* ctx, int64_t begin, int64_t end) {
        (*static_cast<const F*>(ctx))(begin, end);
      },
      &body);
}
}  // namespace detail

template <class F>
void parallel_for(int64_t n, int64_t grain, const F& body) {
  detail::run_split(n, grain, num_threads(), body);
}

// parallel_for for long, memory-bound loops: [0, n) is cut into up to kBalanceChunks chunks
// per thread (each at least `grain`), which the threads take in turn. A worker that starts
// late (woken from sleep, or descheduled on a busy machine) then takes fewer chunks instead
// of making the caller wait for its half. Same rules otherwise; `body` must not depend on
// where the chunks begin.
template <class F>
void parallel_for_balanced(int64_t n, int64_t grain, const F& body) {
  detail::run_split(n, grain, num_threads() * kBalanceChunks, body);
}

// Block size for thread-count-independent partitions: [0, n) in blocks of `block`
// iterations, block b covering [b * block, min(n, (b + 1) * block)).
inline int64_t fixed_block_count(int64_t n, int64_t block) {
  return n <= 0 ? 0 : (n + block - 1) / block;
}

// Runs body(block_index, begin, end) for every fixed block, in parallel over blocks (balanced).
template <class F>
void fixed_blocks(int64_t n, int64_t block, const F& body) {
  const int64_t blocks = fixed_block_count(n, block);
  parallel_for_balanced(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t begin = b * block;
      const int64_t end = begin + block < n ? begin + block : n;
      body(b, begin, end);
    }
  });
}

}  // namespace plait::cpu

// The pool as a plain C entry, for code that is not compiled with these headers (the kernels
// torch.compile generates; plait_backend_cpu._C.parallel_for_address() gives its address).
// Runs fn(begin, end, ctx) over chunks of [0, n) of at least `grain` iterations, as
// parallel_for_balanced does, on torch.get_num_threads() threads (the caller included);
// ranges of at most `grain`, nested calls and calls while the pool is busy run inline. `fn`
// must not throw; it returns once every chunk has run.
extern "C" {
typedef void (*plait_cpu_chunk_fn)(int64_t begin, int64_t end, void* ctx);
void plait_cpu_parallel_for(int64_t n, int64_t grain, plait_cpu_chunk_fn fn, void* ctx) noexcept;
}
