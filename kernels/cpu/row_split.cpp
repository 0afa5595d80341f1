#include "cpu/row_split.h"

namespace engine::cpu {

void RowClaims::reset(int nth) {
  if (nth > capacity_) {
    taken_ = std::make_unique<Taken[]>(static_cast<size_t>(nth));
    capacity_ = nth;
  }
  nth_ = nth;
  for (int r = 0; r < nth; ++r) taken_[r].v.store(0, std::memory_order_relaxed);
}

std::optional<WorkRange> RowClaims::next(int ith, int64_t n) {
  constexpr uint64_t kFrontMask = 0xffffffffull;
  for (int k = 0; k < nth_; ++k) {
    const int r = (ith + k) % nth_;
    const bool own = k == 0;
    const WorkRange range = split_work(n, r, nth_);
    const int64_t size = range.end - range.begin;
    const int64_t least = std::max<int64_t>(1, size / 128);  // the tail's grain: a 128th of a range
    std::atomic<uint64_t>& taken = taken_[r].v;
    uint64_t seen = taken.load(std::memory_order_relaxed);
    for (;;) {
      const auto front = static_cast<int64_t>(seen & kFrontMask), back = static_cast<int64_t>(seen >> 32);
      const int64_t left = size - front - back;
      if (left <= 0) break;
      const int64_t piece = std::min(left, own ? std::max((left + 1) / 2, least) : least);
      const uint64_t claimed = seen + (own ? static_cast<uint64_t>(piece) : static_cast<uint64_t>(piece) << 32);
      // Relaxed: the claims only split the units; the pool's job hand-off orders the results.
      if (taken.compare_exchange_weak(seen, claimed, std::memory_order_relaxed))
        return own ? WorkRange{range.begin + front, range.begin + front + piece} : WorkRange{range.end - back - piece, range.end - back};
    }
  }
  return std::nullopt;
}

}  // namespace engine::cpu
