#pragma once
// A profiled run as Chrome trace-event JSON (chrome://tracing, Perfetto): one complete
// event per step and, inside it, one per node execution laid end to end from the step's
// start; prefill and decode on their own threads.
#include <nlohmann/json_fwd.hpp>

#include "cost/profile.h"

namespace cost {

// {"traceEvents": [...], "displayTimeUnit": "ms"}; times in microseconds since the session began.
nlohmann::json chrome_trace(const ProfiledRun& run);

}  // namespace cost
