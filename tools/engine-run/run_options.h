#pragma once
// engine-run's parsed command line.
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
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
  bool warm_up = true;             // run and forget a short prompt first (Session::warm_up)
  bool profile = false;            // print the profile views after generation
  std::string profile_format = "text";  // text | json | csv
  std::string profile_out;         // file for the views; empty: stdout
  std::string hardware;            // roofline profile for predicted times; empty: the device's
  std::string trace_out;           // Chrome trace-event JSON file
  std::string report;              // self-contained HTML report file
  bool chat = false;               // a conversation in the model's chat template
  bool prompt_given = false;       // -p was on the command line (with --chat: the one user turn)
  std::string chat_template;       // the template's name; empty: the file's tokenizer.chat_template
  std::string system;              // with --chat: the system message
};

using Clock = std::chrono::steady_clock;

// What stream_reply generated: its token count, its text, and whether the context filled.
struct Reply {
  int generated = 0;
  bool context_full = false;
  double ttft_ms = 0;  // from t0 to the first sampled token
  std::string text;
};
// Samples up to n_predict tokens from `logits` on, streaming their text to stdout, until an
// end-of-generation token or a full context.
Reply stream_reply(engine::Session& session, engine::Sampler& sampler, std::span<const float> logits, int n_predict,
                   Clock::time_point t0);
// The timings and memory line of a run, to stderr.
void print_run_stats(const engine::Session& session, double ttft_ms);

// The session over the model of `opt.model`, or over the built-in one when none was given.
std::unique_ptr<engine::Session> open_session(const RunOptions& opt, const engine::SessionParams& params);
// open_session, then its warm-up unless --no-warmup: the session generate and chat run on.
std::unique_ptr<engine::Session> open_warm_session(const RunOptions& opt);
// The model's name in reports: its path, or the built-in model's name.
std::string model_label(const RunOptions& opt);

// Streams generated text to stdout and ends with the metrics line. Returns the exit code.
int run_generate(const RunOptions& opt);
// The profile views (and the Chrome trace) of a session run with per-op timing.
void write_profile(const engine::Session& session, const RunOptions& opt);
// A conversation: user turns from -p or stdin (one a line, until an empty line or EOF), each
// answered in the chat template. Returns the exit code.
int run_chat(const RunOptions& opt);
// Teacher-forced comparison against a reference JSONL. Returns the exit code.
int run_replay(const RunOptions& opt);
