// Gemma 3 graph: the token embedding scaled by sqrt(n_embd); RMS norms before and after both
// attention and the feed-forward; Q and K heads RMS-normed and Q pre-scaled; NeoX RoPE with a
// base of 10000 in the sliding-window layers and the file's base and scaling in the global
// ones (every sixth); a GELU-gated feed-forward.
#include <cmath>

#include "arch_blocks.h"

namespace engine {

StepGraph build_gemma3(const Model& model, const KVCache& kv, const StepShape& step) {
  constexpr int64_t kGlobalEvery = 6;
  constexpr float kSlidingRopeBase = 10000.0f;
  StepBuilder b(model, kv, step);
  const HParams& hp = b.hp();
  Graph& g = b.g();
  // query_pre_attn_scalar: the head size, but the embedding over the heads in the 62-layer 27B.
  const float q_scale = 1.0f / std::sqrt(static_cast<float>(hp.n_layer == 62 ? hp.n_embd / hp.n_head : hp.n_embd_head));
  Tensor* tok_embd = b.weight("token_embd.weight", {hp.n_embd, hp.n_vocab});
  Tensor* inp = named(g.scale(token_embedding(b, tok_embd), std::sqrt(static_cast<float>(hp.n_embd))), "inp_scaled");
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    g.set_layer(static_cast<int>(il));
    const std::string sfx = layer_suffix(il), layer = layer_module(il);
    const auto norm = [&](Tensor* x, const char* weight, const std::string& name, const std::string& suffix) {
      return rms_norm(b, x, b.weight(blk(il, weight), {hp.n_embd}), name, suffix);
    };
    const bool sliding = hp.n_swa > 0 && il % kGlobalEvery < kGlobalEvery - 1;
    g.set_module(layer + ".input_layernorm");
    Tensor* cur = norm(inp, "attn_norm", "attn_norm", sfx);
    cur = self_attention(b, il, cur,
                         AttentionKind{.qk_norm = true,
                                       .rope_mode = kRopeNeox,
                                       .rope_freq_base = sliding ? kSlidingRopeBase : hp.rope_freq_base,
                                       .rope_freq_scale = sliding ? 1.0f : hp.rope_freq_scale,
                                       .q_scale = q_scale,
                                       .sliding = sliding});
    g.set_module(layer + ".post_attention_layernorm");
    cur = norm(b.output_rows(il, cur), "post_attention_norm", "attn_post_norm", sfx);
    g.set_module(layer);  // residual connection
    Tensor* sa_out = named(g.add(cur, b.output_rows(il, inp)), "sa_out" + sfx);
    g.set_module(layer + ".pre_feedforward_layernorm");
    cur = norm(sa_out, "ffn_norm", "ffn_norm", sfx);
    cur = gated_ffn(b, il, cur, FfnKind{.act = Op::GELU});
    g.set_module(layer + ".post_feedforward_layernorm");
    cur = norm(cur, "post_ffw_norm", "ffn_post_norm", "");
    inp = layer_output(b, il, cur, sa_out);
  }
  return rms_norm_lm_head(b, inp, tok_embd);
}

}  // namespace engine
