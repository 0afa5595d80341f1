#pragma once
// Even split of n work items among nth threads: thread ith takes [begin, end).
#include <algorithm>
#include <cstdint>

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

}  // namespace engine::cpu
