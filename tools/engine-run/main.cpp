// engine-run: generate text from a GGUF model, or replay a reference to check logits.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>

#include "cost/hardware.h"
#include "engine/chat.h"
#include "engine/dtype.h"
#include "run_options.h"
#include "tool_cli.h"

int main(int argc, char** argv) {
  using tool_cli::integer;
  using tool_cli::number;
  using tool_cli::writable_file;
  RunOptions opt;
  std::string kv_type = "f16";
  CLI::App app{"engine-run: generate text with a GGUF model (with no -m: the built-in stories260K model)"};
  tool_cli::show_defaults(app);
  app.add_option("-m,--model", opt.model, "GGUF model file (default: the built-in stories260K.gguf)");
  CLI::Option* prompt = app.add_option("-p,--prompt", opt.prompt, "prompt text (with --chat: the one user turn)");
  CLI::Option* chat = app.add_flag(
      "--chat", opt.chat, "chat in the model's template: user turns from -p, else one a line from stdin until an empty line");
  app.add_option("--chat-template", opt.chat_template, "with --chat: the template (default: the file's)")
      ->check(tool_cli::checked_by([](const std::string& name) { engine::chat_template_named(name); }, "NAME"))
      ->needs(chat);
  app.add_option("--system", opt.system, "with --chat: the system message")->needs(chat);
  app.add_option("-n,--n-predict", opt.n_predict, "tokens to generate")->check(integer(0, 1 << 24));
  app.add_option("-t,--threads", opt.session.n_threads, "threads (default: all hardware threads)")->check(integer(1, 1024));
  app.add_option("-c,--ctx", opt.session.n_ctx, "context size (0: the model's, at most 4096)")
      ->check(integer(int64_t{0}, int64_t{1} << 24));
  app.add_option("-b,--ubatch", opt.session.n_ubatch, "prompt tokens per step")->check(integer(int64_t{1}, int64_t{1} << 16));
  app.add_option("--temp", opt.sampler.temperature, "temperature (0: greedy)")->check(number(0.0, 100.0));
  app.add_option("--top-k", opt.sampler.top_k, "top-k (0: off)")->check(integer(0, 1 << 30));
  app.add_option("--top-p", opt.sampler.top_p, "top-p")->check(number(0.0, 1.0));
  app.add_option("--seed", opt.sampler.seed, "sampling seed")->check(integer(uint64_t{0}, UINT64_MAX));
  app.add_option("--backend", opt.session.backend, "backend (--list-devices shows those built in)")
      ->check(tool_cli::checked_by([](const std::string& name) { engine::check_backend(name); }, "NAME"));
  app.add_option("--device", opt.session.device, "the backend's device number (--list-devices)")->check(integer(0, 1023));
  bool list_devices = false;
  app.add_flag("--list-devices", list_devices, "list the devices of every backend built in, then exit");
  app.add_option("--kv-type", kv_type, "KV cache type")->check(CLI::IsMember({"f16", "f32"}));
  app.add_option("--replay", opt.replay, "reference JSONL to replay (teacher forcing)")->check(CLI::ExistingFile)->excludes(chat);
  app.add_option("--replay-out", opt.replay_out, "write this engine's replay JSONL here")->check(writable_file);
  bool no_warm_up = false;
  app.add_flag("--no-warmup", no_warm_up,
               "skip the warm-up (a short prompt and one decode step, run and forgotten before the prompt so that "
               "one-time costs stay out of the timings and the profile)");
  app.add_flag("--profile", opt.profile, "time every op; print the profile views after generation");
  app.add_option("--profile-format", opt.profile_format, "text | json | csv")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  app.add_option("--profile-out", opt.profile_out, "write the profile views to this file (default: stdout)")
      ->check(writable_file);
  app.add_option("--hw", opt.hardware,
                 "hardware profile for predicted times (engine-cost --hw list; default: the device's, cpu-local for the CPU)")
      ->check(tool_cli::checked_by(cost::check_hardware_name, "PROFILE"));
  app.add_option("--trace-out", opt.trace_out, "write a Chrome trace (JSON) of every op execution here")
      ->check(writable_file);
  app.add_option("--report", opt.report, "write the profile as one self-contained HTML page here")->check(writable_file);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "log model and session details to stderr");
  app.add_option("--tolerance", opt.tolerance, "replay tolerance (0: by weight type)")->check(number(0.0, 1e9));
  if (const auto exit_code = tool_cli::parse(app, argc, argv, "engine-run")) return *exit_code;
  if (list_devices) return tool_cli::print_devices();
  opt.session.kv_type = *engine::dtype_from_name(kv_type);
  opt.prompt_given = prompt->count() > 0;
  opt.warm_up = !no_warm_up;
  opt.session.profile = opt.profile || !opt.trace_out.empty() || !opt.report.empty();
  tool_cli::log_to_stderr(verbose ? spdlog::level::info : spdlog::level::warn);
  try {
    engine::check_backend(opt.session.backend, opt.session.device);  // before any model is loaded
    if (!opt.replay.empty()) return run_replay(opt);
    return opt.chat ? run_chat(opt) : run_generate(opt);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "engine-run: error: %s\n", e.what());
    return 1;
  }
}
