#include "cpu/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace engine::cpu {
namespace {

// How long a waiting thread spins before it sleeps: longer than the single-threaded nodes
// between two parallel ones (a futex wake-up costs tens of microseconds, every node), short
// enough that an idle pool sleeps within a millisecond of its last job.
constexpr auto kSpinTime = std::chrono::microseconds(500);
constexpr int kPausesPerClockRead = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Returns once `value` differs from `old` (spin first, then futex wait).
template <typename T>
T wait_for_change(const std::atomic<T>& value, T old) {
  const auto spin_until = std::chrono::steady_clock::now() + kSpinTime;
  do {
    for (int i = 0; i < kPausesPerClockRead; ++i) {
      T now = value.load(std::memory_order_acquire);
      if (now != old) return now;
      cpu_relax();
    }
  } while (std::chrono::steady_clock::now() < spin_until);
  for (;;) {
    value.wait(old, std::memory_order_acquire);
    T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
  }
}

constexpr uint64_t kCountMask = 0xffffffffull;

}  // namespace

void Barrier::reset(int n) {
  n_ = n;
  arrived_.store(0, std::memory_order_relaxed);
}

void Barrier::wait() {
  if (n_ <= 1) return;
  const uint32_t phase = phase_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    phase_.fetch_add(1, std::memory_order_acq_rel);
    phase_.notify_all();
    return;
  }
  wait_for_change(phase_, phase);
}

void barrier_wait(const ComputeParams& p) {
  if (p.nth > 1 && p.barrier) p.barrier->wait();
}

ThreadPool::ThreadPool(int n_threads) {
  const int workers = std::max(n_threads, 1) - 1;
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 1; i <= workers; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  job_.fetch_add(1ull << 32, std::memory_order_acq_rel);
  job_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run(int nth, const std::function<void(int)>& fn) {
  nth = std::clamp(nth, 1, size());
  if (nth == 1) {
    fn(0);
    return;
  }
  fn_ = &fn;
  error_ = nullptr;
  pending_.store(nth - 1, std::memory_order_relaxed);
  const uint64_t generation = (job_.load(std::memory_order_relaxed) >> 32) + 1;
  job_.store((generation << 32) | static_cast<uint64_t>(nth), std::memory_order_release);
  job_.notify_all();

  try {
    fn(0);
  } catch (...) {
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
  for (int left = pending_.load(std::memory_order_acquire); left != 0;
       left = pending_.load(std::memory_order_acquire))
    wait_for_change(pending_, left);
  fn_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void ThreadPool::worker_loop(int ith) {
  uint64_t seen = 0;  // generation 0 is never a job, so a job posted before we start is still seen
  for (;;) {
    seen = wait_for_change(job_, seen);
    if (stop_.load(std::memory_order_acquire)) return;
    if (static_cast<uint64_t>(ith) >= (seen & kCountMask)) continue;
    try {
      (*fn_)(ith);
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace engine::cpu
