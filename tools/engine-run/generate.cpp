#include <chrono>
#include <cstdio>
#include <fmt/core.h>

#include "cost/process_memory.h"
#include "engine/error.h"
#include "run_options.h"

int run_generate(const RunOptions& opt) {
  auto session = open_session(opt, opt.session);
  const engine::Tokenizer& tok = session->tokenizer();
  std::vector<int32_t> prompt = tok.encode(opt.prompt, tok.add_bos_default());
  if (prompt.empty()) throw engine::Error("the prompt encodes to no tokens");
  if (static_cast<int64_t>(prompt.size()) > session->n_ctx())
    throw engine::Error(fmt::format("prompt of {} tokens is longer than the context of {}", prompt.size(), session->n_ctx()));

  engine::Sampler sampler(opt.sampler);
  const auto t0 = std::chrono::steady_clock::now();
  std::span<const float> logits = session->prefill(prompt);
  double ttft_ms = 0;
  int generated = 0;
  bool context_full = false;
  std::fputs(opt.prompt.c_str(), stdout);
  while (generated < opt.n_predict) {
    const int32_t next = sampler.sample(logits.data(), static_cast<int32_t>(logits.size()));
    if (generated == 0) ttft_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (tok.is_eog(next)) break;
    std::fputs(tok.decode_token(next).c_str(), stdout);
    std::fflush(stdout);
    if (++generated == opt.n_predict) break;
    if ((context_full = session->n_past() >= session->n_ctx())) break;
    logits = session->decode(next);
  }
  std::fputs("\n", stdout);
  std::fflush(stdout);  // the text ends before the stderr lines when both go to one file
  if (context_full)
    std::fprintf(stderr,
                 "engine-run: the context of %lld positions is full after %d of %d tokens (it keeps the %zu prompt "
                 "tokens and %lld generated ones); use a larger -c to generate more\n",
                 static_cast<long long>(session->n_ctx()), generated, opt.n_predict, prompt.size(),
                 static_cast<long long>(session->n_past() - static_cast<int64_t>(prompt.size())));

  const engine::Timings& t = session->timings();
  const engine::MemoryUse mem = session->memory();
  auto per_s = [](int64_t n, double ms) { return ms > 0 ? 1000.0 * static_cast<double>(n) / ms : 0.0; };
  std::fprintf(stderr,
               "load %.1f ms | prompt %lld tokens | TTFT %.1f ms | prefill %.1f ms (%.1f tok/s) | decode %lld tokens "
               "%.1f ms (%.1f tok/s)\n",
               t.load_ms, static_cast<long long>(t.prefill_tokens), ttft_ms, t.prefill_ms,
               per_s(t.prefill_tokens, t.prefill_ms), static_cast<long long>(t.decode_tokens), t.decode_ms,
               per_s(t.decode_tokens, t.decode_ms));
  std::fprintf(stderr,
               "memory: weights %zu bytes | KV cache %zu bytes | compute buffer %zu bytes | scratch %zu bytes | peak RSS "
               "%zu bytes\n",
               mem.weights, mem.kv_cache, mem.compute_buffer, mem.scratch, cost::peak_rss_bytes());
  if (opt.session.profile) write_profile(*session, opt);
  return 0;
}
