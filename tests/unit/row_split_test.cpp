#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "cpu/row_split.h"

using engine::cpu::RowClaims;
using engine::cpu::split_work;
using engine::cpu::WorkRange;

namespace {

// Every unit of [0, n) in exactly one of the pieces.
void expect_each_unit_once(std::vector<WorkRange> pieces, int64_t n) {
  std::sort(pieces.begin(), pieces.end(), [](const WorkRange& a, const WorkRange& b) { return a.begin < b.begin; });
  int64_t next = 0;
  for (const WorkRange& p : pieces) {
    ASSERT_LT(p.begin, p.end);
    ASSERT_EQ(p.begin, next) << "a gap or an overlap before unit " << p.begin;
    next = p.end;
  }
  EXPECT_EQ(next, n);
}

TEST(RowClaims, ThreadsTakeTheirOwnRangeFrontFirstInHalvingPieces) {
  RowClaims claims;
  claims.reset(3);
  const int64_t n = 100;
  std::vector<WorkRange> pieces;
  for (int ith = 0; ith < 3; ++ith) {
    const auto first = claims.next(ith, n);
    ASSERT_TRUE(first);
    const WorkRange own = split_work(n, ith, 3);
    EXPECT_EQ(first->begin, own.begin);
    EXPECT_EQ(first->end - first->begin, (own.end - own.begin + 1) / 2);
    pieces.push_back(*first);
  }
  // Round-robin: each thread's pieces follow on from its last one while its range lasts.
  for (bool any = true; any;) {
    any = false;
    for (int ith = 0; ith < 3; ++ith)
      if (const auto p = claims.next(ith, n)) {
        pieces.push_back(*p);
        any = true;
      }
  }
  expect_each_unit_once(pieces, n);
}

TEST(RowClaims, AThreadAloneTakesTheOtherRangesFromTheirBack) {
  RowClaims claims;
  claims.reset(4);
  const int64_t n = 64;
  std::vector<WorkRange> pieces;
  while (const auto p = claims.next(2, n)) pieces.push_back(*p);
  expect_each_unit_once(pieces, n);
  // Its own range first, then the next thread's, from that range's end.
  const WorkRange own = split_work(n, 2, 4), next = split_work(n, 3, 4);
  int64_t own_units = 0;
  size_t i = 0;
  for (; i < pieces.size() && pieces[i].begin >= own.begin && pieces[i].end <= own.end; ++i) own_units += pieces[i].end - pieces[i].begin;
  EXPECT_EQ(own_units, own.end - own.begin);
  ASSERT_LT(i, pieces.size());
  EXPECT_EQ(pieces[i].end, next.end);
  EXPECT_LT(pieces[i].end - pieces[i].begin, next.end - next.begin) << "a steal takes a tail piece, not the whole range";
  // Left to the others: nothing.
  for (int ith = 0; ith < 4; ++ith) EXPECT_FALSE(claims.next(ith, n));
}

TEST(RowClaims, ResetMakesEveryUnitClaimableAgain) {
  RowClaims claims;
  claims.reset(2);
  while (claims.next(0, 10)) {
  }
  claims.reset(5);  // more threads than before
  std::vector<WorkRange> pieces;
  for (int ith = 4; ith >= 0; --ith)
    while (const auto p = claims.next(ith, 37)) pieces.push_back(*p);
  expect_each_unit_once(pieces, 37);
}

TEST(RowClaims, ConcurrentThreadsClaimEveryUnitExactlyOnce) {
  constexpr int kThreads = 4;
  constexpr int64_t kUnits = 997;
  RowClaims claims;
  for (int round = 0; round < 50; ++round) {
    claims.reset(kThreads);
    std::vector<std::atomic<int>> taken(kUnits);
    std::vector<std::thread> threads;
    for (int ith = 0; ith < kThreads; ++ith)
      threads.emplace_back([&, ith] {
        while (const auto p = claims.next(ith, kUnits))
          for (int64_t u = p->begin; u < p->end; ++u) taken[u].fetch_add(1);
      });
    for (auto& t : threads) t.join();
    for (int64_t u = 0; u < kUnits; ++u) ASSERT_EQ(taken[u].load(), 1) << "unit " << u << " in round " << round;
  }
}

}  // namespace
