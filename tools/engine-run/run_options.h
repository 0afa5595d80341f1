#pragma once
// engine-run's parsed command line.
#include <cstdint>
#include <string>

#include "engine/sampler.h"
#include "engine/session.h"

struct RunOptions {
  std::string model;
  std::string prompt = "Once upon a time";
  int n_predict = 64;
  engine::SessionParams session;
  engine::SamplerParams sampler;
  std::string replay;      // reference JSONL to check against
  std::string replay_out;  // where to write this engine's replay JSONL
  double tolerance = 0;    // 0: the reference README's tolerance for the model's weights
};

// Streams generated text to stdout and ends with the metrics line. Returns the exit code.
int run_generate(const RunOptions& opt);
// Teacher-forced comparison against a reference JSONL. Returns the exit code.
int run_replay(const RunOptions& opt);
