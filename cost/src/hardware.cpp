// The hardware profiles by name: the builtin ones (the embedded cost/hardware/*.json files), profile files, and
// cpu-local, measured on the spot.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "cost/hardware.h"
#include "engine/error.h"
#include "hardware_data.h"

namespace cost {
namespace {

HardwareProfile parse_embedded_profile(const engine::EmbeddedFile& file) {
  const std::string where = "hardware profile " + std::string(file.name);
  HardwareProfile p = parse_profile(file.content, where);
  if (p.name + ".json" != file.name) throw engine::Error(where + " names itself '" + p.name + "'");
  return p;
}

bool is_profile_file(std::string_view name) { return name.ends_with(".json"); }

HardwareProfile read_profile_file(std::string_view path) {
  std::ifstream in{std::string(path)};
  if (!in) throw engine::Error("hardware profile file '" + std::string(path) + "' cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_profile(text.str(), "hardware profile file '" + std::string(path) + "'");
}

}  // namespace

std::string_view compute_class_name(ComputeClass c) {
  switch (c) {
    case ComputeClass::kF32: return "f32";
    case ComputeClass::kF16: return "f16";
    case ComputeClass::kBF16: return "bf16";
    case ComputeClass::kInt8: return "int8";
  }
  return "?";
}

double HardwareProfile::peak_tflops(ComputeClass c) const {
  switch (c) {
    case ComputeClass::kF32: return peak_tflops_f32;
    case ComputeClass::kF16: return peak_tflops_f16;
    case ComputeClass::kBF16: return peak_tflops_bf16;
    case ComputeClass::kInt8: return peak_tflops_int8;
  }
  return 0;
}

const std::vector<HardwareProfile>& builtin_profiles() {
  static const std::vector<HardwareProfile> profiles = [] {
    std::vector<HardwareProfile> out;
    for (const engine::EmbeddedFile& f : detail::embedded_hardware_files()) out.push_back(parse_embedded_profile(f));
    return out;
  }();
  return profiles;
}

std::string hardware_name_for(const engine::DeviceInfo& device) {
  // A software GPU driver (lavapipe) computes on the host's cores from the host's memory.
  if (device.backend == "cpu" || device.type == "software") return "cpu-local";
  for (const HardwareProfile& p : builtin_profiles())
    if (std::find(p.device_names.begin(), p.device_names.end(), device.name) != p.device_names.end()) return p.name;
  throw engine::Error("no hardware profile for " + device.backend + " device " + std::to_string(device.index) + " ('" +
                      device.name + "'); name one with --hw");
}

void check_hardware_name(std::string_view name) {
  if (name == "cpu-local") return;
  if (is_profile_file(name)) {
    read_profile_file(name);
    return;
  }
  std::string known;
  for (const HardwareProfile& p : builtin_profiles()) {
    if (p.name == name) return;
    known += p.name + ", ";
  }
  throw engine::Error("unknown hardware profile '" + std::string(name) + "' (" + known +
                      "cpu-local, or a profile file FILE.json)");
}

HardwareProfile hardware_profile(std::string_view name, int threads, const OpProbe& probe) {
  check_hardware_name(name);
  if (name == "cpu-local") return measure_local_cpu(threads, probe);
  if (is_profile_file(name)) return read_profile_file(name);
  return *std::find_if(builtin_profiles().begin(), builtin_profiles().end(),
                       [&](const HardwareProfile& p) { return p.name == name; });
}

}  // namespace cost
