#pragma once
// A persistent worker pool and a reusable barrier for the CPU backend. Threads are
// created once; between jobs they spin (up to half a millisecond), then sleep on a futex
// (std::atomic::wait) so idle workers do not burn CPU between tokens.
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "cpu/kernels.h"

namespace engine::cpu {

// All `n` participants block in wait() until the last one arrives; reusable at once.
class Barrier {
 public:
  explicit Barrier(int n = 1) : n_(n) {}
  // Changes the participant count; only while no thread is inside wait().
  void reset(int n);
  void wait();

 private:
  int n_;
  std::atomic<int> arrived_{0};
  std::atomic<uint32_t> phase_{0};
};

class ThreadPool {
 public:
  // `n_threads` counts the caller: n_threads - 1 workers are started.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Calls fn(ith) for ith in [0, nth) on nth threads, the caller being ith 0, and returns
  // when all are done. nth is clamped to [1, size()]. Rethrows the first exception thrown.
  void run(int nth, const std::function<void(int)>& fn);

 private:
  void worker_loop(int ith);

  std::vector<std::thread> workers_;
  // Job generation in the high 32 bits, its thread count in the low 32 bits, so a worker
  // reads both in one load and never sees the count of a job it does not belong to.
  std::atomic<uint64_t> job_{0};
  std::atomic<int> pending_{0};  // workers of the current job still running
  std::atomic<bool> stop_{false};
  const std::function<void(int)>* fn_ = nullptr;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace engine::cpu
