// GPT-2 graph: learned position embeddings, LayerNorm with bias, one fused QKV projection
// split into views, attention without rope, biased projections and a GELU feed-forward.
// Node names follow llama.cpp's.
#include <cmath>

#include "engine/error.h"
#include "step_builder.h"

namespace engine {
namespace {

// LayerNorm: normalize, then scale by `<name>.weight` and shift by `<name>.bias`.
Tensor* layer_norm(StepBuilder& b, Tensor* x, const std::string& name, const std::string& out_name,
                   const std::string& sfx) {
  Graph& g = b.g();
  const int64_t n_embd = b.hp().n_embd;
  Tensor* cur = named(g.norm(x, b.hp().norm_eps), "norm" + sfx);
  cur = named(g.mul(cur, b.weight(name + ".weight", {n_embd})), "norm_w" + sfx);
  return named(g.add(cur, b.weight(name + ".bias", {n_embd})), out_name + sfx);
}

}  // namespace

StepGraph build_gpt2(const Model& model, const KVCache& kv, const StepShape& step) {
  StepBuilder b(model, kv, step);
  const HParams& hp = b.hp();
  Graph& g = b.g();
  const int64_t n_embd = hp.n_embd, head = hp.n_embd_head, n_tokens = step.n_tokens, n_ff = hp.n_ff;
  const int64_t n_embd_kv = hp.n_embd_kv(), n_qkv = n_embd + 2 * n_embd_kv;
  const float kq_scale = 1.0f / std::sqrt(static_cast<float>(head));
  Tensor* tok_embd = b.weight("token_embd.weight", {n_embd, hp.n_vocab});
  Tensor* pos_embd = b.weight("position_embd.weight", {n_embd, hp.n_ctx_train});
  if (hp.n_embd_q() != n_embd)
    throw Error(model.file().path() + ": gpt2 heads span the embedding, but " + std::to_string(hp.n_head) + " heads of " +
                std::to_string(head) + " make " + std::to_string(hp.n_embd_q()));
  if (step.n_past + step.n_tokens > hp.n_ctx_train)
    throw Error(model.file().path() + ": position " + std::to_string(step.n_past + step.n_tokens - 1) +
                " is past the " + std::to_string(hp.n_ctx_train) + " learned position embeddings");

  g.set_module("transformer.wte");
  Tensor* inp = named(g.get_rows(tok_embd, b.out().tokens), "inp_embd");
  g.set_module("transformer.wpe");
  Tensor* pos = named(g.get_rows(pos_embd, b.out().pos), "pos_embd");
  g.set_module("transformer");
  inp = named(g.add(inp, pos), "inpL");
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    g.set_layer(static_cast<int>(il));
    const std::string sfx = "-" + std::to_string(il), layer = "transformer.h." + std::to_string(il);
    g.set_module(layer + ".ln_1");
    Tensor* cur = layer_norm(b, inp, "blk." + std::to_string(il) + ".attn_norm", "attn_norm", sfx);

    g.set_module(layer + ".attn.c_attn");
    cur = named(g.mul_mat(b.weight(blk(il, "attn_qkv", "weight"), {n_embd, n_qkv}), cur), "wqkv" + sfx);
    cur = named(g.add(cur, b.weight(blk(il, "attn_qkv", "bias"), {n_qkv})), "bqkv" + sfx);
    // Q, K and V are views into the fused rows, as llama.cpp takes them (no copies).
    g.set_module(layer + ".attn");  // head views, KV cache, attention
    const size_t f32 = sizeof(float);
    Tensor* q = named(g.view_3d(cur, head, hp.n_head, n_tokens, head * f32, cur->nb[1], 0), "Qcur" + sfx);
    Tensor* k = named(g.view_3d(cur, head, hp.n_head_kv, n_tokens, head * f32, cur->nb[1], n_embd * f32), "Kcur" + sfx);
    Tensor* v = named(g.view_2d(cur, n_embd_kv, n_tokens, cur->nb[1], (n_embd + n_embd_kv) * f32), "Vcur" + sfx);
    g.expand(q);
    g.expand(k);
    g.expand(v);

    cur = b.attention(il, q, k, v, kq_scale);
    g.set_module(layer + ".attn.c_proj");
    cur = named(g.mul_mat(b.weight(blk(il, "attn_output", "weight"), {n_embd, n_embd}), cur), "kqv_wo" + sfx);
    cur = named(g.add(cur, b.weight(blk(il, "attn_output", "bias"), {n_embd})), "kqv_out" + sfx);
    g.set_module(layer);  // residual connections
    Tensor* ffn_inp = b.attention_residual(il, cur, inp);

    g.set_module(layer + ".ln_2");
    cur = layer_norm(b, ffn_inp, "blk." + std::to_string(il) + ".ffn_norm", "ffn_norm", sfx);
    g.set_module(layer + ".mlp.c_fc");
    cur = named(g.mul_mat(b.weight(blk(il, "ffn_up", "weight"), {n_embd, n_ff}), cur), "ffn_up" + sfx);
    cur = named(g.add(cur, b.weight(blk(il, "ffn_up", "bias"), {n_ff})), "ffn_up_b" + sfx);
    g.set_module(layer + ".mlp.act");
    cur = named(g.gelu(cur), "ffn_gelu" + sfx);
    g.set_module(layer + ".mlp.c_proj");
    cur = named(g.mul_mat(b.weight(blk(il, "ffn_down", "weight"), {n_ff, n_embd}), cur), "ffn_down" + sfx);
    cur = named(g.add(cur, b.weight(blk(il, "ffn_down", "bias"), {n_embd})), "ffn_out" + sfx);
    g.set_module(layer);
    inp = named(g.add(cur, ffn_inp), "l_out" + sfx);
  }
  g.set_layer(-1);
  g.set_module("transformer.ln_f");
  Tensor* cur = layer_norm(b, inp, "output_norm", "result_norm", "");
  Tensor* output = b.optional_weight("output.weight", {n_embd, hp.n_vocab});
  if (!output) output = tok_embd;  // tied embeddings
  g.set_module("lm_head");
  return b.finish(named(g.mul_mat(output, cur), "result_output"));
}

}  // namespace engine
