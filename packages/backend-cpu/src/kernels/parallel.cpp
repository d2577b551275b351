// The worker pool behind parallel_for (parallel.h).
//
// One job at a time: the thread that wins `pool_mutex` publishes a job (a generation number,
// the chunk function and its context), wakes the workers, runs chunk 0 itself, then waits
// until every chunk is done and every worker has left the job. Workers take chunk indices
// from an atomic counter, so a chunk runs exactly once whichever threads show up; only the
// first `helpers` workers join a job (num_threads() - 1, fewer for fewer chunks), so a job
// with more chunks than threads (parallel_for_balanced) still runs on num_threads() threads.
// Threads that lose the race for the pool run their loop inline instead of waiting.
#include "parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace plait::cpu {
namespace {

// How long a worker busy-waits for the next job, and the caller for the last chunk, before
// it blocks. A blocked worker takes tens of microseconds to wake on a busy machine; the
// next job of a loop of kernels is usually a few microseconds of Python away, but a worker
// that finished its share early has been waiting since, so it spins for a while.
constexpr std::chrono::microseconds kWorkerSpin{200};
constexpr std::chrono::microseconds kCallerSpin{100};

int initial_threads() {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

thread_local bool t_in_region = false;

class Pool {
 public:
  Pool() : threads_(initial_threads()) {}

  // Never destroyed (see host_allocator()): workers may still be parked at exit.
  static Pool& get() {
    static Pool* pool = new Pool();
    return *pool;
  }

  int threads() const { return threads_.load(std::memory_order_relaxed); }
  void set_threads(int n) { threads_.store(std::max(1, n), std::memory_order_relaxed); }

  void run(int64_t n, int chunks, detail::ChunkFn fn, const void* ctx) {
    std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) {  // another thread's region holds the pool: run inline
      fn(ctx, 0, n);
      return;
    }
    const int helpers = std::min(chunks, threads()) - 1;
    ensure_workers(helpers);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = Job{fn, ctx, n, chunks, (n + chunks - 1) / chunks, helpers};
      next_.store(1, std::memory_order_relaxed);  // chunk 0 is the caller's
      pending_ = chunks;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    t_in_region = true;
    run_chunk(0);
    drain();
    t_in_region = false;
    // The last chunk is usually a few microseconds away: spin before sleeping on done_.
    spin_until(kCallerSpin, [&] {
      return pending_.load(std::memory_order_acquire) == 0 &&
             active_.load(std::memory_order_acquire) == 0;
    });
    std::exception_ptr error;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Every worker must have left drain() before the job may be rewritten.
      done_.wait(lock, [&] { return pending_ == 0 && active_ == 0; });
      error = error_;
      job_.fn = nullptr;
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  struct Job {
    detail::ChunkFn fn = nullptr;
    const void* ctx = nullptr;
    int64_t n = 0;
    int chunks = 0;
    int64_t chunk_size = 0;
    int helpers = 0;  // workers 0 .. helpers - 1 join
  };

  void run_chunk(int c) {
    const int64_t begin = c * job_.chunk_size;
    const int64_t end = std::min(job_.n, begin + job_.chunk_size);
    std::exception_ptr error;
    if (begin < end) {
      try {
        job_.fn(job_.ctx, begin, end);
      } catch (...) {
        error = std::current_exception();
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (error && !error_) error_ = error;
    if (--pending_ == 0) done_.notify_all();
  }

  // Takes chunks until none is left.
  void drain() {
    while (true) {
      const int c = next_.fetch_add(1, std::memory_order_relaxed);
      if (c >= job_.chunks) return;
      run_chunk(c);
    }
  }

  void ensure_workers(int wanted) {
    while (static_cast<int>(workers_.size()) < wanted) {
      const int index = static_cast<int>(workers_.size());
      workers_.emplace_back([this, index] { worker_loop(index); });
      workers_.back().detach();
    }
  }

  // Busy-waits (with the CPU's pause hint) up to `spin` for `ready`; true if it became true.
  // Waking a thread blocked on a condition variable costs tens of microseconds on a busy
  // machine, more than a whole kernel on a small tensor: a worker that spins a little after
  // each job catches the next one at once, as OpenMP's threads do.
  template <class Ready>
  static bool spin_until(std::chrono::microseconds spin, const Ready& ready) {
    const auto deadline = std::chrono::steady_clock::now() + spin;
    while (true) {
      for (int i = 0; i < 64; ++i) {
        if (ready()) return true;
        cpu_relax();
      }
      if (std::chrono::steady_clock::now() > deadline) return ready();
    }
  }

  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  void worker_loop(int index) {
    t_in_region = true;
    uint64_t seen = 0;
    while (true) {
      spin_until(kWorkerSpin, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load() != seen && job_.fn != nullptr; });
        seen = generation_.load();
        if (index >= job_.helpers) continue;  // not needed for this job
        ++active_;
      }
      drain();
      std::lock_guard<std::mutex> lock(mutex_);
      if (--active_ == 0) done_.notify_all();
    }
  }

  std::atomic<int> threads_;
  std::mutex run_mutex_;  // held by the thread whose job the pool runs
  std::mutex mutex_;      // guards the job, pending_, error_, generation_
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> workers_;
  Job job_;
  std::atomic<int> next_{0};
  // Changed under mutex_ only; atomic so that spinning threads may read them without it.
  std::atomic<int> pending_{0};
  std::atomic<int> active_{0};  // workers inside drain()
  std::atomic<uint64_t> generation_{0};
  std::exception_ptr error_;
};

}  // namespace

int num_threads() { return Pool::get().threads(); }
void set_num_threads(int n) { Pool::get().set_threads(n); }
bool in_parallel_region() { return t_in_region; }

namespace detail {
void run_chunks(int64_t n, int chunks, ChunkFn fn, const void* ctx) {
  Pool::get().run(n, chunks, fn, ctx);
}
}  // namespace detail

}  // namespace plait::cpu

extern "C" void plait_cpu_parallel_for(int64_t n, int64_t grain, plait_cpu_chunk_fn fn,
                                       void* ctx) noexcept {
  if (fn == nullptr) return;
  plait::cpu::parallel_for_balanced(n, grain,
                                    [fn, ctx](int64_t begin, int64_t end) { fn(begin, end, ctx); });
}
