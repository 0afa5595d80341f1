// Learning each decode product class's stream requests from the steps' own times (requests_learner.h).
#include "cpu/requests_learner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace engine::cpu {

double RequestsLearner::Recent::median() const {
  std::array<double, kTrials> sorted = values;
  const auto n = static_cast<std::ptrdiff_t>(size());
  std::sort(sorted.begin(), sorted.begin() + n);
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

std::optional<size_t> RequestsLearner::slot_index(DType weight, int64_t row_elements) const {
  const auto id = static_cast<uint32_t>(weight);
  if (!on_ || id >= kDTypeIds) return std::nullopt;
  return id * kRowClasses + row_class(row_elements);
}

RequestsLearner::Slot* RequestsLearner::slot(DType weight, int64_t row_elements) {
  const auto i = slot_index(weight, row_elements);
  if (!i) return nullptr;
  Slot& s = slots_[*i];
  if (!s.started) {
    s.started = true;
    s.kept = decode_requests(weight, row_elements);
  }
  return &s;
}

uint64_t RequestsLearner::trial_period(const Slot& s) {
  size_t settled = 0;  // other ways with enough trials against the kept one
  for (size_t way = 0; way < s.trial_ratios.size(); ++way)
    if (static_cast<StreamRequests>(way) != s.kept && s.trial_ratios[way].size() >= kMinTrials) ++settled;
  return settled == 2 ? kTrialPeriod : kFirstTrialPeriod;
}

StreamRequests RequestsLearner::requests(DType weight, int64_t row_elements) {
  Slot* s = slot(weight, row_elements);
  if (!s) return decode_requests(weight, row_elements);
  s->step_way = s->kept;
  // A trial needs the kept way's rate of the steps before it to be set against.
  const uint64_t period = trial_period(*s);
  if (step_ % period != period - 1 || s->kept_rates.size() == 0) return s->step_way;
  // The other two ways in turns, each when due.
  std::array<StreamRequests, 2> others{};
  size_t n = 0;
  for (StreamRequests way : {StreamRequests::kNearAndFar, StreamRequests::kFar, StreamRequests::kNone})
    if (way != s->kept) others[n++] = way;
  if (step_ / period % 2) std::swap(others[0], others[1]);
  for (StreamRequests way : others)
    if (s->due[static_cast<size_t>(way)] <= step_) return s->step_way = way;
  return s->step_way;
}

void RequestsLearner::record(DType weight, int64_t row_elements, size_t weight_bytes, uint64_t ns) {
  if (Slot* s = slot(weight, row_elements)) {
    s->step_bytes += weight_bytes;
    s->step_ns += ns;
  }
}

void RequestsLearner::end_step() {
  ++step_;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.step_ns == 0) continue;
    const double gbs = static_cast<double>(s.step_bytes) / static_cast<double>(s.step_ns);
    s.step_bytes = 0;
    s.step_ns = 0;
    if (s.step_way == s.kept) {
      s.kept_rates.add(gbs);
      continue;
    }
    const auto way = static_cast<size_t>(s.step_way);
    Recent& trials = s.trial_ratios[way];
    trials.add(gbs / s.kept_rates.median());
    const bool decided = trials.size() >= kMinTrials;
    s.spacing[way] = decided && trials.median() < kClearlySlower ? std::min(2 * s.spacing[way], kMostSpacing) : 1;
    s.due[way] = step_ + 2 * trial_period(s) * s.spacing[way] - 1;  // usually every other trial step
    if (!decided || trials.median() <= kTimingNoise) continue;
    const auto weight = static_cast<DType>(i / kRowClasses);
    spdlog::info("cpu: {} rows of {}: {} requests streamed {:.1f} % faster than {} in their last {} trials; kept from now on",
                  dtype_name(weight), kTimedRowElements[i % kRowClasses], requests_name(s.step_way),
                  100 * (trials.median() - 1), requests_name(s.kept), trials.size());
    s = Slot{};  // the figures were against the way kept before
    s.started = true;
    s.kept = static_cast<StreamRequests>(way);
    if (on_kept_) on_kept_(weight, kTimedRowElements[i % kRowClasses], s.kept);
  }
}

StreamRequests RequestsLearner::kept(DType weight, int64_t row_elements) const {
  const auto i = slot_index(weight, row_elements);
  return i && slots_[*i].started ? slots_[*i].kept : decode_requests(weight, row_elements);
}

}  // namespace engine::cpu
