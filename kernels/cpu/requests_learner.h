#pragma once
// How decode's one-column products request their weight ahead (DotTile::requests), learned from
// the steps' own product times. Each (weight dtype, row class) starts on the timed choice
// (decode_tuning.h); one step in kTrialPeriod (in kFirstTrialPeriod until both other ways have
// had their first trials against the kept one) runs one of the other two ways instead, and its rate
// is set against the kept way's in the steps just before it, so that a change of the host's
// memory speed between trials does not count. A way whose recent trials streamed faster than the
// kept one by more than the noise is kept from then on; one clearly slower is tried ever more
// rarely (a trial step on a way half as fast costs a whole step). One timing at start sees one
// state of the host: on the Zen 5 VM of docs/benchmarks.md the memory's speed changes by half
// within minutes, and the fastest way with it. Each way newly kept is handed on (the backend
// passes keep_learned_requests, so the next run starts from it).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "cpu/decode_tuning.h"
#include "cpu/vec_dot.h"
#include "engine/dtype.h"

namespace engine::cpu {

class RequestsLearner {
 public:
  static constexpr uint64_t kTrialPeriod = 16;  // steps: one trial step, the rest on the kept way
  // Until a way is settled: a choice taken in the other memory state is undone in ~30 steps, not ~100.
  static constexpr uint64_t kFirstTrialPeriod = 4;
  static constexpr size_t kTrials = 5;          // a way's last trials that count
  static constexpr size_t kMinTrials = 3;       // before a way can be kept
  static constexpr double kClearlySlower = 0.9;  // a way's trials below this: its next comes later,
  static constexpr uint64_t kMostSpacing = 8;    // at most this many times its usual spacing

  // Called with each way kept in place of another, for products of that dtype on rows of that class.
  using OnKept = std::function<void(DType weight, int64_t row_elements, StreamRequests kept)>;

  // Off: every product keeps the timed choice (where decode_choice_measured() is false).
  explicit RequestsLearner(bool on, OnKept on_kept = nullptr) : on_(on), on_kept_(std::move(on_kept)) {}

  // The way products of `weight` on rows of `row_elements` take in the step now running.
  StreamRequests requests(DType weight, int64_t row_elements);
  // A product job of this step that took requests(weight, row_elements): its weight bytes and time.
  void record(DType weight, int64_t row_elements, size_t weight_bytes, uint64_t ns);
  // Ends a step: each class it ran adds the step's rate to what its way has streamed, and the
  // fastest way is kept.
  void end_step();
  // The way kept for these products now, trials aside.
  StreamRequests kept(DType weight, int64_t row_elements) const;

 private:
  // The last few of a series of figures (a ring), and their median.
  struct Recent {
    std::array<double, kTrials> values{};
    size_t count = 0;  // added so far (the ring holds the last kTrials)
    void add(double v) { values[count++ % kTrials] = v; }
    size_t size() const { return count < kTrials ? count : kTrials; }
    double median() const;
  };
  struct Slot {
    bool started = false;  // kept holds the timed choice
    StreamRequests kept = StreamRequests::kNearAndFar;
    Recent kept_rates;                    // GB/s of the kept way's last steps
    std::array<Recent, 3> trial_ratios;  // by way: a trial's rate over the kept way's median before it
    std::array<uint64_t, 3> spacing{1, 1, 1};  // by way: its trials' spacing, in its usual ones
    std::array<uint64_t, 3> due{};             // by way: the step from which it may be tried
    StreamRequests step_way = StreamRequests::kNearAndFar;
    size_t step_bytes = 0;
    uint64_t step_ns = 0;
  };
  static constexpr size_t kSlots = kDTypeIds * kRowClasses;
  static uint64_t trial_period(const Slot& s);
  Slot* slot(DType weight, int64_t row_elements);
  // The index in slots_ of these products' slot; none when off or for a dtype id past the slots.
  std::optional<size_t> slot_index(DType weight, int64_t row_elements) const;

  bool on_;
  OnKept on_kept_;
  uint64_t step_ = 0;
  std::array<Slot, kSlots> slots_{};
};

}  // namespace engine::cpu
