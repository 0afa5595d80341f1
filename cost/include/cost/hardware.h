#pragma once
// Hardware profiles for roofline prediction: memory bandwidth and peak arithmetic rate per
// compute class. The named profiles are vendor datasheet figures (cost/hardware/*.json,
// compiled into the library); "cpu-local" is measured on the machine running the code.
#include <map>
#include <ostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend.h"
#include "engine/op.h"

namespace cost {

// The arithmetic a node runs on: matrix products of f16/bf16/quantized weights can use
// the matching matrix units; everything else runs at the vector FP32 rate.
enum class ComputeClass { kF32, kF16, kBF16, kInt8 };
std::string_view compute_class_name(ComputeClass c);  // "f32", "f16", "bf16", "int8"

struct HardwareProfile {
  std::string name;         // "h100-sxm", "cpu-local"
  std::string description;  // what the figures describe
  double mem_bw_gbs = 0;    // memory bandwidth, GB/s (1e9 bytes per second)
  // Peak dense throughput, TFLOP/s (TOP/s for int8), per compute class.
  double peak_tflops_f32 = 0;
  double peak_tflops_f16 = 0;
  double peak_tflops_bf16 = 0;
  double peak_tflops_int8 = 0;
  double mem_gb = 0;  // memory capacity, GB
  // What each op the backend runs costs besides its bytes and arithmetic: a kernel launch or
  // dispatch, a thread pool's fork and join. Microseconds; 0 where none is known.
  double op_overhead_us = 0;
  // The same cost as the profiler times an op: a GPU's timing events slow its launches, so a
  // timed op pays more than one in a plain run. Calibration takes it out of profiled times, and
  // predictions set beside a profiled run add it (join_profile). 0: op_overhead_us stands for it.
  double profiled_op_overhead_us = 0;
  // The rates the backend's products of weights reach, per weight dtype (engine-bench
  // --calibrate): TFLOP/s over a kLongPrompt-token prompt and over a kShortPrompt-token one, and
  // GB/s a token at a time (weights beyond the last-level cache). A weight product of a dtype
  // listed here takes these instead of its compute class's peak and mem_bw_gbs (roofline.h).
  std::map<engine::DType, double> mul_mat_tflops;
  std::map<engine::DType, double> mul_mat_short_tflops;
  std::map<engine::DType, double> mul_mat_gbs;
  // The bytes per second a product of n activation columns moves, n from 2 to kShortPrompt - 1,
  // per weight dtype (the weights beyond the last-level cache, as mul_mat_gbs's): kernels that
  // take columns in blocks run a column count between two blocks far from any smooth curve.
  std::map<engine::DType, std::map<int64_t, double>> mul_mat_columns_gbs;
  // The arithmetic rate of attention's products (the KV cache's, per cache dtype) over a
  // kLongPrompt-token prompt, which they take instead of mul_mat_tflops.
  std::map<engine::DType, double> attention_tflops;
  // Their rate in a decode step, one query a head, after kLongPrompt cached positions and after
  // kDeepContext, between steps whose weights stream beyond the last-level cache. A step after
  // other counts takes a rate geometric in log(positions) between the two (the nearer beyond
  // them; the first alone where the second is missing), and one of fewer than kLongPrompt
  // queries a rate between that and the long prompt's, geometric in log(queries).
  std::map<engine::DType, double> attention_decode_tflops;
  std::map<engine::DType, double> attention_decode_deep_tflops;
  // Whether the backend's attention kernels skip the positions a causal mask hides (the
  // products of two or more queries a head, the softmax): its attention rates are then of the
  // work done (roofline.h causal_work_share), not of the dense work the graph counts.
  bool attention_skips_masked = false;
  // The bandwidth the backend's kernels of each other op reach on a kLongPrompt-token prompt's
  // tensors (engine-bench --calibrate): a node of a listed op moves its bytes at this rate
  // instead of mem_bw_gbs. Software drivers run elementwise kernels far below the bandwidth.
  std::map<engine::Op, double> op_gbs;
  static constexpr int64_t kLongPrompt = 512, kShortPrompt = 16, kDeepContext = 2048;
  std::string calibrated;  // when engine-bench --calibrate measured it ("2026-11-25 08:03 UTC"); empty otherwise
  std::vector<std::string> device_names;  // the names drivers report for it ("NVIDIA H100 80GB HBM3")

  double peak_tflops(ComputeClass c) const;
  // The fixed cost of an op as the profiler times it: profiled_op_overhead_us, else op_overhead_us.
  double timed_op_overhead_us() const { return profiled_op_overhead_us > 0 ? profiled_op_overhead_us : op_overhead_us; }
};

// The datasheet profiles, in name order; parsed once, on first use.
const std::vector<HardwareProfile>& builtin_profiles();

// The profile that predictions set beside a device's measurements use: the CPU, and a software
// GPU driver running on it, are measured on the spot ("cpu-local"); a GPU takes the profile
// listing its name among device_names; a device with no profile is an engine::Error.
std::string hardware_name_for(const engine::DeviceInfo& device);

// Throws engine::Error naming the known profiles when `name` is none of them (a name ending in
// ".json" is a profile file, which must read and parse); measures nothing.
void check_hardware_name(std::string_view name);
// The device whose ops the cpu-local probe times: the CPU backend, or a software GPU driver
// computing on the same host (lavapipe), whose dispatches cost more than the CPU's nodes.
struct OpProbe {
  std::string backend = "cpu";
  int device = 0;
};

// A profile file's JSON text (cost/hardware's layout). Throws engine::Error naming `where` and the key at fault
// when the text is not JSON, a key is missing or of the wrong type, or a figure is not a positive finite number.
HardwareProfile parse_profile(std::string_view json_text, const std::string& where);

// The profile called `name`; "cpu-local" runs measure_local_cpu(threads, probe), a FILE.json
// is read (a file write_profile wrote, or one laid out as cost/hardware/*.json). Throws
// engine::Error naming the known profiles when `name` is none of them.
HardwareProfile hardware_profile(std::string_view name, int threads, const OpProbe& probe = {});

// Measures this machine with `threads` threads (< 1 s): read bandwidth over a buffer well
// beyond the last-level cache and FP32 FMA throughput, each the best of a few passes, and the
// fixed cost of an op on the probe's backend. The f16/bf16/int8 rates derive from the f32
// rate and the CPU's instruction set (docs/hardware.md). Throws engine::Error when threads < 1.
HardwareProfile measure_local_cpu(int threads, const OpProbe& probe = {});

// The bytes the read probe streams: twice this machine's last-level cache, within 64 MiB..2 GiB.
size_t read_probe_bytes();

// This machine's read bandwidth now, in GB/s: the read measure_local_cpu times, with `threads`
// threads. nullopt where the host's available memory is under twice the probe's buffer.
std::optional<double> measure_read_bandwidth_gbs(int threads);

// The fixed cost of an op on the probe's backend, in microseconds: a chain of tiny multiplies,
// each its own node, computed whole through the Backend API; the best of a few passes, per node.
// `us` as a plain run takes it, `profiled_us` as the profiler times each op of a profiled run.
struct OpOverhead {
  double us = 0, profiled_us = 0;
};
OpOverhead measure_op_overhead(int threads, const OpProbe& probe);

// Writes `p` as a profile file (cost/hardware's layout), every figure's source `source`.
void write_profile(const HardwareProfile& p, std::ostream& out, std::string_view source);

}  // namespace cost
