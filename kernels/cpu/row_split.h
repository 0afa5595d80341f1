#pragma once
// How threads share a node's work: an even split (split_work), and for one-column products
// (decode) contiguous ranges whose tails the threads that finish first take over (RowClaims).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

namespace engine::cpu {

struct WorkRange {
  int64_t begin;
  int64_t end;
};

inline WorkRange split_work(int64_t n, int ith, int nth) {
  const int64_t per = (n + nth - 1) / nth;
  const int64_t begin = std::min(n, per * ith);
  return {begin, std::min(n, begin + per)};
}

// n units split evenly into one contiguous range per thread. A thread claims its own range from
// the front, in pieces that halve as the range shrinks (few pieces, one unbroken stream for the
// prefetchers); once its range is done it takes the last pieces of the others' ranges from the
// back. Which thread computes a unit changes nothing of its result, only when the node ends: the
// memory system slows one thread or the other by several percent from node to node, and with
// fixed halves every node waits for the slower one.
class RowClaims {
 public:
  // Every range unclaimed, for a node on nth threads. Only while no thread claims.
  void reset(int nth);
  // The next units [begin, end) of n for thread ith, or nullopt when every range is done.
  std::optional<WorkRange> next(int ith, int64_t n);

 private:
  // Units taken from the front of a range (low 32 bits) and from its back (high 32 bits), in
  // one word so that a front claim and a back claim never take the same unit.
  struct alignas(64) Taken {
    std::atomic<uint64_t> v{0};
  };
  int nth_ = 0;
  std::unique_ptr<Taken[]> taken_;
  int capacity_ = 0;
};

}  // namespace engine::cpu
