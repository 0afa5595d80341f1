// Llama-family graph (Llama 1/2/3, Mistral, TinyLlama): RMS norm, rotary attention with
// grouped KV heads, SwiGLU feed-forward. Qwen2, Qwen3 and Phi-3 are the same graph with
// another attention: Qwen2's Q, K and V projections have biases, Qwen3 RMS-norms each Q and K
// head, all three rotate halves (NeoX RoPE). Phi-3 fuses Q, K and V into one projection and
// gate and up into another, scales Q before attention, and past its original context rotates
// by its long-context frequency factors. Where the file has experts (Mixtral, Qwen3 MoE), the
// feed-forward is the mixture of experts.
#include <cmath>

#include "arch_blocks.h"
#include "engine/error.h"

namespace engine {
namespace {

StepGraph build_llama_like(const Model& model, const KVCache& kv, const StepShape& step, const AttentionKind& attention,
                           const FfnKind& ffn = {}) {
  StepBuilder b(model, kv, step);
  const HParams& hp = b.hp();
  Graph& g = b.g();
  Tensor* tok_embd = b.weight("token_embd.weight", {hp.n_embd, hp.n_vocab});
  Tensor* inp = token_embedding(b, tok_embd);
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    g.set_layer(static_cast<int>(il));
    const std::string sfx = layer_suffix(il), layer = layer_module(il);
    g.set_module(layer + ".input_layernorm");
    Tensor* cur = rms_norm(b, inp, b.weight(blk(il, "attn_norm"), {hp.n_embd}), "attn_norm", sfx);
    cur = self_attention(b, il, cur, attention);
    g.set_module(layer);  // residual connection
    Tensor* ffn_inp = b.attention_residual(il, cur, inp);
    g.set_module(layer + ".post_attention_layernorm");
    cur = rms_norm(b, ffn_inp, b.weight(blk(il, "ffn_norm"), {hp.n_embd}), "ffn_norm", sfx);
    cur = hp.n_expert > 0 ? moe_ffn(b, il, cur) : gated_ffn(b, il, cur, ffn);
    inp = layer_output(b, il, cur, ffn_inp);
  }
  return rms_norm_lm_head(b, inp, tok_embd);
}

}  // namespace

StepGraph build_llama(const Model& model, const KVCache& kv, const StepShape& step) {
  return build_llama_like(model, kv, step, AttentionKind{});
}

StepGraph build_qwen2(const Model& model, const KVCache& kv, const StepShape& step) {
  return build_llama_like(model, kv, step, AttentionKind{.qkv_bias = true, .rope_mode = kRopeNeox});
}

StepGraph build_qwen3(const Model& model, const KVCache& kv, const StepShape& step) {
  return build_llama_like(model, kv, step, AttentionKind{.qk_norm = true, .rope_mode = kRopeNeox});
}

StepGraph build_qwen3moe(const Model& model, const KVCache& kv, const StepShape& step) {
  if (model.hparams().n_expert == 0) throw Error(model.file().path() + ": qwen3moe needs qwen3moe.expert_count");
  return build_qwen3(model, kv, step);
}

StepGraph build_phi3(const Model& model, const KVCache& kv, const StepShape& step) {
  const HParams& hp = model.hparams();
  const bool long_context = kv.n_ctx() > hp.n_ctx_orig;
  return build_llama_like(model, kv, step,
                          AttentionKind{.fused_qkv = true,
                                        .rope_mode = kRopeNeox,
                                        .rope_factors = long_context ? "rope_factors_long.weight" : "rope_factors_short.weight",
                                        .q_scale = 1.0f / std::sqrt(static_cast<float>(hp.n_embd_head))},
                          FfnKind{.fused_gate_up = true});
}

}  // namespace engine
