#include <chrono>
#include <cstdio>
#include <fmt/core.h>

#include "cost/process_memory.h"
#include "engine/error.h"
#include "run_options.h"

Reply stream_reply(engine::Session& session, engine::Sampler& sampler, std::span<const float> logits, int n_predict,
                   Clock::time_point t0) {
  const engine::Tokenizer& tok = session.tokenizer();
  Reply r;
  while (r.generated < n_predict) {
    const int32_t next = sampler.sample(logits.data(), static_cast<int32_t>(logits.size()));
    if (r.generated == 0) r.ttft_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (tok.is_eog(next)) break;
    const std::string piece = tok.decode_token(next);
    r.text += piece;
    std::fputs(piece.c_str(), stdout);
    std::fflush(stdout);
    if (++r.generated == n_predict) break;
    if ((r.context_full = session.n_past() >= session.n_ctx())) break;
    logits = session.decode(next);
  }
  return r;
}

void print_run_stats(const engine::Session& session, double ttft_ms) {
  const engine::Timings& t = session.timings();
  const engine::MemoryUse mem = session.memory();
  auto per_s = [](int64_t n, double ms) { return ms > 0 ? 1000.0 * static_cast<double>(n) / ms : 0.0; };
  const std::string warm_up = t.warm_up_ms > 0 ? fmt::format(" | warm-up {:.1f} ms", t.warm_up_ms) : "";
  std::fprintf(stderr,
               "load %.1f ms%s | prompt %lld tokens | TTFT %.1f ms | prefill %.1f ms (%.1f tok/s) | decode %lld tokens "
               "%.1f ms (%.1f tok/s)\n",
               t.load_ms, warm_up.c_str(), static_cast<long long>(t.prefill_tokens), ttft_ms, t.prefill_ms,
               per_s(t.prefill_tokens, t.prefill_ms), static_cast<long long>(t.decode_tokens), t.decode_ms,
               per_s(t.decode_tokens, t.decode_ms));
  std::fprintf(stderr,
               "memory: weights %zu bytes | KV cache %zu bytes | compute buffer %zu bytes | scratch %zu bytes | peak RSS "
               "%zu bytes\n",
               mem.weights, mem.kv_cache, mem.compute_buffer, mem.scratch, cost::peak_rss_bytes());
}

int run_generate(const RunOptions& opt) {
  auto session = open_warm_session(opt);
  const engine::Tokenizer& tok = session->tokenizer();
  std::vector<int32_t> prompt = tok.encode(opt.prompt, tok.add_bos_default());
  if (prompt.empty()) throw engine::Error("the prompt encodes to no tokens");
  if (static_cast<int64_t>(prompt.size()) > session->n_ctx())
    throw engine::Error(fmt::format("prompt of {} tokens is longer than the context of {}", prompt.size(), session->n_ctx()));

  engine::Sampler sampler(opt.sampler);
  const auto t0 = Clock::now();
  std::span<const float> logits = session->prefill(prompt);
  std::fputs(opt.prompt.c_str(), stdout);
  const Reply r = stream_reply(*session, sampler, logits, opt.n_predict, t0);
  std::fputs("\n", stdout);
  std::fflush(stdout);  // the text ends before the stderr lines when both go to one file
  if (r.context_full)
    std::fprintf(stderr,
                 "engine-run: the context of %lld positions is full after %d of %d tokens (it keeps the %zu prompt "
                 "tokens and %lld generated ones); use a larger -c to generate more\n",
                 static_cast<long long>(session->n_ctx()), r.generated, opt.n_predict, prompt.size(),
                 static_cast<long long>(session->n_past() - static_cast<int64_t>(prompt.size())));
  print_run_stats(*session, r.ttft_ms);
  if (opt.session.profile) write_profile(*session, opt);
  return 0;
}
