#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "bench.h"

namespace {

// llama.cpp names a model's size class like "1B" or "135M"; this rounds the real count.
std::string parameter_class(int64_t params) {
  const double p = static_cast<double>(params);
  if (p >= 1e9) return fmt::format("{:.0f}B", p / 1e9);
  if (p >= 1e6) return fmt::format("{:.0f}M", p / 1e6);
  return fmt::format("{:.0f}K", std::max(1.0, std::round(p / 1e3)));
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

ModelInfo describe_model(const engine::Session& session, const std::string& path) {
  const engine::Model& model = session.model();
  ModelInfo info;
  info.path = path;
  info.size_bytes = model.weights_bytes();
  std::map<engine::DType, size_t> bytes;
  for (const engine::GGUFTensorInfo& t : model.file().tensors()) {
    info.params += t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];
    bytes[t.type] += t.nbytes;
  }
  for (const auto& [type, n] : bytes) {
    info.dtype_mix.push_back({type, info.size_bytes ? static_cast<double>(n) / static_cast<double>(info.size_bytes) : 0});
    if (session.backend().prefill_float_activations(type)) info.prefill_float_activations.push_back(type);
  }
  std::stable_sort(info.dtype_mix.begin(), info.dtype_mix.end(),
                   [](const DtypeShare& a, const DtypeShare& b) { return a.share > b.share; });
  info.description = fmt::format("{} {} {}", model.hparams().arch, parameter_class(info.params),
                                 upper(engine::dtype_name(model.dominant_dtype())));
  return info;
}
