#include "arch_blocks.h"

#include <cmath>
#include <vector>

namespace engine {

std::string layer_module(int64_t il) { return "model.layers." + std::to_string(il); }

Tensor* rms_norm(StepBuilder& b, Tensor* x, Tensor* weight, const std::string& name, const std::string& sfx) {
  Graph& g = b.g();
  return named(g.mul(named(g.rms_norm(x, b.hp().norm_eps), "norm" + sfx), weight), name + sfx);
}

Tensor* token_embedding(StepBuilder& b, Tensor* tok_embd) {
  b.g().set_module("model.embed_tokens");
  return named(b.g().get_rows(tok_embd, b.out().tokens), "inp_embd");
}

Tensor* self_attention(StepBuilder& b, int64_t il, Tensor* cur, const AttentionKind& kind) {
  Graph& g = b.g();
  const HParams& hp = b.hp();
  const int64_t head = hp.n_embd_head, n_tokens = b.step().n_tokens, n_q = hp.n_embd_q(), n_kv = hp.n_embd_kv();
  const std::string sfx = layer_suffix(il), layer = layer_module(il);
  Tensor* rope_factors = b.optional_weight(kind.rope_factors, {hp.n_rot / 2});
  Tensor *q, *k, *v;  // q and k [head, heads, n_tokens], v [n_embd_kv, n_tokens]
  if (kind.fused_qkv) {
    g.set_module(layer + ".self_attn.qkv_proj");
    Tensor* qkv = named(g.mul_mat(b.weight(blk(il, "attn_qkv"), {hp.n_embd, n_q + 2 * n_kv}), cur), "wqkv" + sfx);
    g.set_module(layer + ".self_attn");  // Q, K and V are views of the fused rows
    const size_t f32 = sizeof(float), row = qkv->nb[1];
    q = named(g.view_3d(qkv, head, hp.n_head, n_tokens, head * f32, row, 0), "Qcur" + sfx);
    k = named(g.view_3d(qkv, head, hp.n_head_kv, n_tokens, head * f32, row, n_q * f32), "Kcur" + sfx);
    v = named(g.view_2d(qkv, n_kv, n_tokens, row, (n_q + n_kv) * f32), "Vcur" + sfx);
  } else {
    // One projection of Q, K or V: "<name>-<il>", with its bias where the architecture has one.
    const auto project = [&](const char* proj, const char* tensor, int64_t rows, const char* name) {
      g.set_module(layer + ".self_attn." + proj);
      Tensor* t = named(g.mul_mat(b.weight(blk(il, tensor), {hp.n_embd, rows}), cur), name + sfx);
      if (kind.qkv_bias) t = named(g.add(t, b.weight(blk(il, tensor, "bias"), {rows})), name + sfx);
      return t;
    };
    q = project("q_proj", "attn_q", n_q, "Qcur");
    k = project("k_proj", "attn_k", n_kv, "Kcur");
    v = project("v_proj", "attn_v", n_kv, "Vcur");
    g.set_module(layer + ".self_attn");
    q = named(g.reshape_3d(q, head, hp.n_head, n_tokens), "Qcur" + sfx);
    k = named(g.reshape_3d(k, head, hp.n_head_kv, n_tokens), "Kcur" + sfx);
  }
  // Heads of Q or K, normed where the architecture does so, then rotated.
  const RopeParams rope{.n_rot = static_cast<int32_t>(hp.n_rot),
                        .mode = kind.rope_mode,
                        .freq_base = kind.rope_freq_base > 0 ? kind.rope_freq_base : hp.rope_freq_base,
                        .freq_scale = kind.rope_freq_scale > 0 ? kind.rope_freq_scale : hp.rope_freq_scale,
                        .attn_factor = hp.rope_attn_factor};
  const auto rotate = [&](Tensor* t, const char* name, const char* norm) {
    if (kind.qk_norm) t = rms_norm(b, t, b.weight(blk(il, norm), {head}), std::string(name) + "_normed", sfx);
    return named(g.rope(t, b.out().pos, rope_factors, rope), name + sfx);
  };
  q = rotate(q, "Qcur", "attn_q_norm");
  k = rotate(k, "Kcur", "attn_k_norm");
  g.expand(q);
  g.expand(k);
  g.expand(v);
  float kq_scale = 1.0f / std::sqrt(static_cast<float>(head));
  if (kind.q_scale > 0) {
    q = named(g.scale(q, kind.q_scale), "Qcur_scaled" + sfx);
    kq_scale = 1.0f;
  }
  cur = b.attention(il, q, k, v, kq_scale, kind.sliding);
  g.set_module(layer + ".self_attn.o_proj");
  return named(g.mul_mat(b.weight(blk(il, "attn_output"), {n_q, hp.n_embd}), cur), "kqv_out" + sfx);
}

Tensor* gated_ffn(StepBuilder& b, int64_t il, Tensor* cur, const FfnKind& kind) {
  Graph& g = b.g();
  const HParams& hp = b.hp();
  const std::string sfx = layer_suffix(il), layer = layer_module(il);
  Tensor *gate, *up;
  if (kind.fused_gate_up) {
    g.set_module(layer + ".mlp.gate_up_proj");
    Tensor* gate_up = named(g.mul_mat(b.weight(blk(il, "ffn_up"), {hp.n_embd, 2 * hp.n_ff}), cur), "ffn_up" + sfx);
    const size_t row = gate_up->nb[1];
    gate = named(g.view_2d(gate_up, hp.n_ff, gate_up->ne[1], row, 0), "ffn_gate" + sfx);
    up = named(g.view_2d(gate_up, hp.n_ff, gate_up->ne[1], row, hp.n_ff * sizeof(float)), "ffn_up_half" + sfx);
  } else {
    g.set_module(layer + ".mlp.gate_proj");
    gate = named(g.mul_mat(b.weight(blk(il, "ffn_gate"), {hp.n_embd, hp.n_ff}), cur), "ffn_gate" + sfx);
    g.set_module(layer + ".mlp.up_proj");
    up = named(g.mul_mat(b.weight(blk(il, "ffn_up"), {hp.n_embd, hp.n_ff}), cur), "ffn_up" + sfx);
  }
  g.set_module(layer + ".mlp.act_fn");
  gate = kind.act == Op::GELU ? named(g.gelu(gate), "ffn_gelu" + sfx) : named(g.silu(gate), "ffn_silu" + sfx);
  g.set_module(layer + ".mlp");
  Tensor* par = named(g.mul(gate, up), "ffn_gate_par" + sfx);
  g.set_module(layer + ".mlp.down_proj");
  return named(g.mul_mat(b.weight(blk(il, "ffn_down"), {hp.n_ff, hp.n_embd}), par), "ffn_out" + sfx);
}

Tensor* moe_ffn(StepBuilder& b, int64_t il, Tensor* cur) {
  Graph& g = b.g();
  const HParams& hp = b.hp();
  const std::string sfx = layer_suffix(il), layer = layer_module(il);
  const int64_t n_expert = hp.n_expert, used = hp.n_expert_used, n_tokens = cur->ne[1];
  g.set_module(layer + ".mlp.gate");  // the router
  Tensor* logits = named(g.mul_mat(b.weight(blk(il, "ffn_gate_inp"), {hp.n_embd, n_expert}), cur), "ffn_moe_logits" + sfx);
  Tensor* probs = named(g.soft_max(logits, nullptr, 1.0f), "ffn_moe_probs" + sfx);
  Tensor* order = named(g.argsort_desc(probs), "ffn_moe_argsort" + sfx);
  Tensor* chosen = named(g.view_2d(order, used, n_tokens, order->nb[1], 0), "ffn_moe_topk" + sfx);
  Tensor* weights = named(g.get_rows(g.reshape_3d(probs, 1, n_expert, n_tokens), chosen), "ffn_moe_weights" + sfx);
  weights = g.reshape_2d(weights, used, n_tokens);
  Tensor* sum = named(g.sum_rows(weights), "ffn_moe_weights_sum" + sfx);
  // llama.cpp clamps the sum below at 2^-14; the top probabilities of a softmax sum to at least used / n_expert.
  weights = g.reshape_3d(named(g.div(weights, sum), "ffn_moe_weights_norm" + sfx), 1, used, n_tokens);
  g.expand(weights);

  g.set_module(layer + ".mlp.experts");
  const auto experts = [&](const char* name, int64_t k, int64_t n) {
    return b.weight(blk(il, name), {k, n, n_expert});
  };
  Tensor* x = g.reshape_3d(cur, hp.n_embd, 1, n_tokens);
  Tensor* up = named(g.mul_mat_id(experts("ffn_up_exps", hp.n_embd, hp.n_ff_exp), x, chosen), "ffn_moe_up" + sfx);
  Tensor* gate = named(g.mul_mat_id(experts("ffn_gate_exps", hp.n_embd, hp.n_ff_exp), x, chosen), "ffn_moe_gate" + sfx);
  Tensor* par = named(g.mul(named(g.silu(gate), "ffn_moe_silu" + sfx), up), "ffn_moe_swiglu" + sfx);
  Tensor* out = named(g.mul_mat_id(experts("ffn_down_exps", hp.n_ff_exp, hp.n_embd), par, chosen), "ffn_moe_down" + sfx);
  out = named(g.mul(out, weights), "ffn_moe_weighted" + sfx);
  // The chosen experts' outputs summed in rank order, their views listed before the adds.
  std::vector<Tensor*> ranked;
  for (int64_t i = 0; i < used; ++i) {
    ranked.push_back(g.view_2d(out, hp.n_embd, n_tokens, out->nb[2], static_cast<size_t>(i) * out->nb[1]));
    g.expand(ranked.back());
  }
  Tensor* sum_out = used == 1 ? g.cont(ranked[0]) : ranked[0];
  for (int64_t i = 1; i < used; ++i) sum_out = g.add(sum_out, ranked[i]);
  return named(sum_out, "ffn_moe_out" + sfx);
}

Tensor* layer_output(StepBuilder& b, int64_t il, Tensor* ffn_out, Tensor* ffn_inp) {
  b.g().set_module(layer_module(il));
  return named(b.g().add(ffn_out, ffn_inp), "l_out" + layer_suffix(il));
}

StepGraph rms_norm_lm_head(StepBuilder& b, Tensor* x, Tensor* tok_embd) {
  Graph& g = b.g();
  const HParams& hp = b.hp();
  g.set_layer(-1);
  g.set_module("model.norm");
  Tensor* cur = rms_norm(b, x, b.weight("output_norm.weight", {hp.n_embd}), "result_norm", "");
  Tensor* output = b.optional_weight("output.weight", {hp.n_embd, hp.n_vocab});
  if (!output) output = tok_embd;  // tied embeddings
  g.set_module("lm_head");
  return b.finish(named(g.mul_mat(output, cur), "result_output"));
}

}  // namespace engine
