// Hardware profiles as JSON (cost/hardware's layout): parsed from profile files and the embedded datasheets,
// written by engine-bench --calibrate.
#include <cmath>
#include <optional>
#include <nlohmann/json.hpp>

#include "cost/hardware.h"
#include "engine/error.h"

namespace cost {
namespace {

using nlohmann::json;

const json& member(const json& object, const std::string& key, const std::string& where) {
  if (!object.is_object()) throw engine::Error(where + " is not a JSON object");
  const auto it = object.find(key);
  if (it == object.end()) throw engine::Error(where + " lacks key '" + key + "'");
  return *it;
}

std::string text(const json& object, const std::string& key, const std::string& where) {
  const json& v = member(object, key, where);
  if (!v.is_string() || v.get_ref<const std::string&>().empty())
    throw engine::Error(where + " key '" + key + "' must be a non-empty string");
  return v.get<std::string>();
}

// A figure is {"value": positive number, "source": where the number comes from}.
double figure(const json& object, const std::string& key, const std::string& where) {
  const std::string here = where + " key '" + key + "'";
  const json& f = member(object, key, where);
  const json& v = member(f, "value", here);
  text(f, "source", here);
  if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
    throw engine::Error(here + " value must be a positive number");
  return v.get<double>();
}

// The optional object `key` of values named by a `what` ({"Q4_0": value, ...}): each name parsed
// by `parse` into an optional key, each value read by `read(object, name, where)`.
template <typename Key, typename Parse, typename Read>
auto values_by_name(const json& object, const std::string& key, const std::string& where, const std::string& what,
                    Parse parse, Read read) {
  std::map<Key, decltype(read(object, key, where))> values;
  const auto it = object.find(key);
  if (it == object.end()) return values;
  const std::string here = where + " key '" + key + "'";
  if (!it->is_object()) throw engine::Error(here + " must be an object of " + what + " names");
  for (const auto& [name, v] : it->items()) {
    const std::optional<Key> k = parse(name);
    if (!k) throw engine::Error(here + " names no " + what + " '" + name + "'");
    values[*k] = read(*it, name, here);
  }
  return values;
}

// The same of figures ({"Q4_0": figure, ...}).
template <typename Key, typename Parse>
std::map<Key, double> rates_by_name(const json& object, const std::string& key, const std::string& where,
                                    const std::string& what, Parse parse) {
  return values_by_name<Key>(object, key, where, what, parse, figure);
}

std::optional<engine::DType> parse_dtype(const std::string& name) { return engine::dtype_from_name(name); }

std::map<engine::DType, double> rates_per_dtype(const json& object, const std::string& key, const std::string& where) {
  return rates_by_name<engine::DType>(object, key, where, "dtype", parse_dtype);
}

std::map<engine::Op, double> rates_per_op(const json& object, const std::string& key, const std::string& where) {
  return rates_by_name<engine::Op>(object, key, where, "op", [](const std::string& n) -> std::optional<engine::Op> {
    for (int i = 0; i < static_cast<int>(engine::Op::COUNT); ++i)
      if (engine::op_name(static_cast<engine::Op>(i)) == n) return static_cast<engine::Op>(i);
    return std::nullopt;
  });
}

// The optional object `key` of {"dtype": {"columns": figure, ...}, ...}: every column count
// from 2 to kShortPrompt - 1.
std::map<engine::DType, std::map<int64_t, double>> column_rates_per_dtype(const json& object, const std::string& key,
                                                                         const std::string& where) {
  const auto parse_columns = [](const std::string& n) -> std::optional<int64_t> {
    for (int64_t c = 2; c < HardwareProfile::kShortPrompt; ++c)
      if (n == std::to_string(c)) return c;
    return std::nullopt;
  };
  return values_by_name<engine::DType>(object, key, where, "dtype", parse_dtype,
                                       [&](const json& o, const std::string& name, const std::string& here) {
                                         return rates_by_name<int64_t>(o, name, here, "column count", parse_columns);
                                       });
}

}  // namespace

HardwareProfile parse_profile(std::string_view content, const std::string& where) {
  json j;
  try {
    j = json::parse(content);
  } catch (const json::exception& e) {  // a syntax error, or a number past double's range
    throw engine::Error(where + ": " + e.what());
  }
  HardwareProfile p;
  p.name = text(j, "name", where);
  p.description = text(j, "description", where);
  p.mem_bw_gbs = figure(j, "mem_bw_gbs", where);
  p.mem_gb = figure(j, "mem_gb", where);
  const json& peak = member(j, "peak_tflops", where);
  const std::string peak_where = where + " key 'peak_tflops'";
  p.peak_tflops_f32 = figure(peak, "f32", peak_where);
  p.peak_tflops_f16 = figure(peak, "f16", peak_where);
  p.peak_tflops_bf16 = figure(peak, "bf16", peak_where);
  p.peak_tflops_int8 = figure(peak, "int8", peak_where);
  if (j.contains("op_overhead_us")) p.op_overhead_us = figure(j, "op_overhead_us", where);
  if (j.contains("profiled_op_overhead_us")) p.profiled_op_overhead_us = figure(j, "profiled_op_overhead_us", where);
  if (j.contains("calibrated")) p.calibrated = text(j, "calibrated", where);
  if (const auto skips = j.find("attention_skips_masked"); skips != j.end()) {
    if (!skips->is_boolean()) throw engine::Error(where + " key 'attention_skips_masked' must be true or false");
    p.attention_skips_masked = skips->get<bool>();
  }
  p.mul_mat_tflops = rates_per_dtype(j, "mul_mat_tflops", where);
  p.mul_mat_short_tflops = rates_per_dtype(j, "mul_mat_short_tflops", where);
  p.mul_mat_gbs = rates_per_dtype(j, "mul_mat_gbs", where);
  p.mul_mat_columns_gbs = column_rates_per_dtype(j, "mul_mat_columns_gbs", where);
  p.attention_tflops = rates_per_dtype(j, "attention_tflops", where);
  p.attention_decode_tflops = rates_per_dtype(j, "attention_decode_tflops", where);
  p.attention_decode_deep_tflops = rates_per_dtype(j, "attention_decode_deep_tflops", where);
  p.op_gbs = rates_per_op(j, "op_gbs", where);
  if (const auto names = j.find("device_names"); names != j.end()) {
    if (!names->is_array()) throw engine::Error(where + " key 'device_names' must be an array of strings");
    for (const json& n : *names) {
      if (!n.is_string() || n.get_ref<const std::string&>().empty())
        throw engine::Error(where + " key 'device_names' must be an array of non-empty strings");
      p.device_names.push_back(n.get<std::string>());
    }
  }
  return p;
}


void write_profile(const HardwareProfile& p, std::ostream& out, std::string_view source) {
  const std::string from(source);
  auto fig = [&](double v) { return json{{"value", v}, {"source", from}}; };
  json j = {{"name", p.name},
            {"description", p.description},
            {"mem_bw_gbs", fig(p.mem_bw_gbs)},
            {"mem_gb", fig(p.mem_gb)},
            {"peak_tflops",
             {{"f32", fig(p.peak_tflops_f32)}, {"f16", fig(p.peak_tflops_f16)}, {"bf16", fig(p.peak_tflops_bf16)},
              {"int8", fig(p.peak_tflops_int8)}}}};
  if (p.op_overhead_us > 0) j["op_overhead_us"] = fig(p.op_overhead_us);
  if (p.profiled_op_overhead_us > 0) j["profiled_op_overhead_us"] = fig(p.profiled_op_overhead_us);
  if (!p.calibrated.empty()) j["calibrated"] = p.calibrated;
  if (p.attention_skips_masked) j["attention_skips_masked"] = true;
  const auto rates = [&](const char* key, const std::map<engine::DType, double>& per_dtype) {
    for (const auto& [dtype, rate] : per_dtype) j[key][std::string(engine::dtype_name(dtype))] = fig(rate);
  };
  rates("mul_mat_tflops", p.mul_mat_tflops);
  rates("mul_mat_short_tflops", p.mul_mat_short_tflops);
  rates("mul_mat_gbs", p.mul_mat_gbs);
  for (const auto& [dtype, per_columns] : p.mul_mat_columns_gbs)
    for (const auto& [columns, rate] : per_columns)
      j["mul_mat_columns_gbs"][std::string(engine::dtype_name(dtype))][std::to_string(columns)] = fig(rate);
  rates("attention_tflops", p.attention_tflops);
  rates("attention_decode_tflops", p.attention_decode_tflops);
  rates("attention_decode_deep_tflops", p.attention_decode_deep_tflops);
  for (const auto& [op, rate] : p.op_gbs) j["op_gbs"][std::string(engine::op_name(op))] = fig(rate);
  if (!p.device_names.empty()) j["device_names"] = p.device_names;
  out << j.dump(2) << "\n";
}

}  // namespace cost
