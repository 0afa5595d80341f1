#pragma once
// engine-run's parsed command line.
#include <cstdint>
#include <memory>
#include <string>

#include "engine/sampler.h"
#include "engine/session.h"

struct RunOptions {
  std::string model;  // empty: the built-in model
  std::string prompt = "Once upon a time";
  int n_predict = 64;
  engine::SessionParams session;
  engine::SamplerParams sampler;
  std::string replay;      // reference JSONL to check against
  std::string replay_out;  // where to write this engine's replay JSONL
  double tolerance = 0;    // 0: the reference README's tolerance for the model's weights
  bool profile = false;            // print the profile views after generation
  std::string profile_format = "text";  // text | json | csv
  std::string profile_out;         // file for the views; empty: stdout
  std::string hardware;            // roofline profile for predicted times; empty: the device's
  std::string trace_out;           // Chrome trace-event JSON file
  std::string report;              // self-contained HTML report file
};

// The session over the model of `opt.model`, or over the built-in one when none was given.
std::unique_ptr<engine::Session> open_session(const RunOptions& opt, const engine::SessionParams& params);
// The model's name in reports: its path, or the built-in model's name.
std::string model_label(const RunOptions& opt);

// Streams generated text to stdout and ends with the metrics line. Returns the exit code.
int run_generate(const RunOptions& opt);
// The profile views (and the Chrome trace) of a session run with per-op timing.
void write_profile(const engine::Session& session, const RunOptions& opt);
// Teacher-forced comparison against a reference JSONL. Returns the exit code.
int run_replay(const RunOptions& opt);
