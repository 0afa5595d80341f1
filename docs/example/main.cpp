// A program linking the installed engine: greedy-generates 16 tokens after a prompt.
#include <cstdio>
#include <engine/error.h>
#include <engine/sampler.h>
#include <engine/session.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.gguf [PROMPT]\n", argv[0]);
    return 2;
  }
  try {
    auto session = engine::Session::create(argv[1], engine::SessionParams{});
    const auto& tok = session->tokenizer();
    auto logits = session->prefill(tok.encode(argc > 2 ? argv[2] : "Hello", tok.add_bos_default()));
    engine::Sampler greedy(engine::SamplerParams{.temperature = 0.0f});
    for (int i = 0; i < 16; ++i) {
      const int32_t next = greedy.sample(logits.data(), static_cast<int32_t>(logits.size()));
      if (tok.is_eog(next)) break;
      std::printf("%s", tok.decode_token(next).c_str());
      logits = session->decode(next);
    }
    std::printf("\n%lld tokens in context\n", static_cast<long long>(session->n_past()));
  } catch (const engine::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
