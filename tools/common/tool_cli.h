#pragma once
// What the command-line tools share: one way to parse and report a bad command line
// ("TOOL: error: ..." and exit status 1), --help with the defaults, and validators that name
// what is wrong with a value before any model is loaded or any step runs. Header-only, so
// the sanitizer builds of the tools compile it with their own flags.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend.h"

namespace tool_cli {

// The library's log on stderr from `level` up, so that stdout holds only the tool's own output
// (the generated text, the tables, the JSON).
inline void log_to_stderr(spdlog::level::level_enum level) {
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  spdlog::set_level(level);
}

// An app whose --help shows each option's default.
inline void show_defaults(CLI::App& app) { app.option_defaults()->always_capture_default(true); }

// Parses the command line. Returns the exit code when the program should stop now (0 after
// --help, 1 after an error printed as "TOOL: error: ..."), std::nullopt when it should go on.
inline std::optional<int> parse(CLI::App& app, int argc, char** argv, const char* tool) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
    return 1;
  }
  return std::nullopt;
}

// A whole number in [lo, hi]: "'abc' is not a whole number", "5000 is outside 0 to 1024".
template <typename Int>
CLI::Validator integer(Int lo, Int hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        Int v{};
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc::result_out_of_range) return s + " is outside " + std::to_string(lo) + " to " + std::to_string(hi);
        if (ec != std::errc() || end != s.data() + s.size()) return "'" + s + "' is not a whole number";
        if (v < lo || v > hi) return s + " is outside " + std::to_string(lo) + " to " + std::to_string(hi);
        return {};
      },
      "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// A number in [lo, hi].
inline CLI::Validator number(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != s.size()) return "'" + s + "' is not a number";
        if (!(v >= lo && v <= hi)) return s + " is outside " + CLI::detail::to_string(lo) + " to " + CLI::detail::to_string(hi);
        return {};
      },
      "[" + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) + "]");
}

// A file the program will write: its folder exists and is writable, and it is not a folder.
inline const CLI::Validator writable_file(
    [](std::string& path) -> std::string {
      namespace fs = std::filesystem;
      std::error_code ec;
      if (path.empty()) return "an empty path";
      if (fs::is_directory(path, ec)) return "'" + path + "' is a directory";
      if (fs::exists(path, ec)) return access(path.c_str(), W_OK) == 0 ? "" : "cannot write '" + path + "'";
      const fs::path dir = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
      if (!fs::is_directory(dir, ec)) return "cannot write '" + path + "': no directory '" + dir.string() + "'";
      if (access(dir.c_str(), W_OK) != 0) return "cannot write '" + path + "': directory '" + dir.string() + "' is not writable";
      return {};
    },
    "FILE");

// A value the library checks with a function that throws (a hardware profile's name, a dtype).
template <typename Check>
CLI::Validator checked_by(Check check, std::string description) {
  return CLI::Validator(
      [check](std::string& s) -> std::string {
        try {
          check(s);
        } catch (const std::exception& e) {
          return e.what();
        }
        return {};
      },
      std::move(description));
}

// --list-devices: one line per device of every backend built in. Returns the exit code.
inline int print_devices() {
  fmt::print("{:<8} {:>6}  {:<40} {:<14} {:>12} {:>12} {:>8}  {}\n", "backend", "device", "name", "type", "memory", "free",
             "subgroup", "driver");
  const std::vector<engine::DeviceInfo> devices = engine::list_devices();
  for (const engine::DeviceInfo& d : devices)
    fmt::print("{:<8} {:>6}  {:<40} {:<14} {:>8.1f} GiB {:>8.1f} GiB {:>8}  {}\n", d.backend, d.index, d.name, d.type,
               static_cast<double>(d.memory_bytes) / (1 << 30), static_cast<double>(d.free_bytes) / (1 << 30),
               d.subgroup_size > 0 ? std::to_string(d.subgroup_size) : "-", d.driver);
  const std::vector<std::string> built = engine::available_backends();
  std::vector<std::string> missing, deviceless;
  for (const std::string& b : engine::known_backends())
    if (std::find(built.begin(), built.end(), b) == built.end())
      missing.push_back(b);
    else if (std::none_of(devices.begin(), devices.end(), [&](const engine::DeviceInfo& d) { return d.backend == b; }))
      deviceless.push_back(b);
  if (!deviceless.empty()) fmt::print("built in, no device found (no driver reports one): {}\n", fmt::join(deviceless, ", "));
  if (!missing.empty()) fmt::print("not built into this binary: {}\n", fmt::join(missing, ", "));
  return 0;
}

}  // namespace tool_cli
