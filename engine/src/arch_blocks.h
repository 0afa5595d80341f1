#pragma once
// The blocks decoder architectures are made of, shared by their builders: RMS norms, rotary
// self-attention with its variants, the gated feed-forward, the output head. Node names
// follow llama.cpp's graphs and module names Hugging Face's (model.layers.N.self_attn...).
#include <string>

#include "step_builder.h"

namespace engine {

// "model.layers.<il>": a layer's module, as Hugging Face names it.
std::string layer_module(int64_t il);

// x / rms(x) * weight: "norm<sfx>", then `name<sfx>`.
Tensor* rms_norm(StepBuilder& b, Tensor* x, Tensor* weight, const std::string& name, const std::string& sfx);

// The token embedding's rows for the step's tokens ("inp_embd"), under model.embed_tokens.
Tensor* token_embedding(StepBuilder& b, Tensor* tok_embd);

// What distinguishes an architecture's self-attention (in a layer).
struct AttentionKind {
  bool fused_qkv = false;        // one projection blk.N.attn_qkv whose rows are Q, K, V (Phi-3)
  bool qkv_bias = false;         // Q, K and V projections add blk.N.attn_{q,k,v}.bias (Qwen2)
  bool qk_norm = false;          // Q and K heads RMS-normed by blk.N.attn_{q,k}_norm before RoPE (Qwen3)
  int32_t rope_mode = kRopeNormal;
  float rope_freq_base = 0;      // 0: the model's rope.freq_base
  float rope_freq_scale = 0;     // 0: the model's rope scaling
  const char* rope_factors = "rope_freqs.weight";  // the frequency factors' tensor, where the file has it
  float q_scale = 0;             // Q scaled by this, then no scale in the softmax (Gemma); 0: 1/sqrt(head)
  bool sliding = false;          // under the sliding-window mask
};

// Layer il's self-attention on the normed input cur [n_embd, n_tokens]: Q, K, V projections,
// RoPE, the KV cache, attention, the output projection ("kqv_out-<il>").
Tensor* self_attention(StepBuilder& b, int64_t il, Tensor* cur, const AttentionKind& kind);

// What distinguishes an architecture's gated feed-forward.
struct FfnKind {
  Op act = Op::SILU;             // SILU (SwiGLU) or GELU (GeGLU)
  bool fused_gate_up = false;    // blk.N.ffn_up holds gate rows then up rows, no ffn_gate (Phi-3)
};

// down(act(gate(x)) * up(x)) ("ffn_out-<il>").
Tensor* gated_ffn(StepBuilder& b, int64_t il, Tensor* cur, const FfnKind& kind);

// The mixture-of-experts feed-forward, as llama.cpp's build_moe_ffn with softmax gating: a
// router (blk.N.ffn_gate_inp) scores the experts per token, the top n_expert_used are chosen
// ("ffn_moe_topk-<il>") and their probabilities renormalized; each chosen expert's SwiGLU
// (blk.N.ffn_{gate,up,down}_exps, one matrix per expert) runs on the token, and the outputs,
// weighted, are summed ("ffn_moe_out-<il>").
Tensor* moe_ffn(StepBuilder& b, int64_t il, Tensor* cur);

// ffn_out + ffn_inp, the layer's output ("l_out-<il>").
Tensor* layer_output(StepBuilder& b, int64_t il, Tensor* ffn_out, Tensor* ffn_inp);

// The final RMS norm and the output matrix (the token embedding where the file ties them):
// the step's finished graph, logits "result_output".
StepGraph rms_norm_lm_head(StepBuilder& b, Tensor* x, Tensor* tok_embd);

}  // namespace engine
