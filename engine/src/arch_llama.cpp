// Llama-family graph (Llama 1/2/3, Mistral, TinyLlama): RMS norm, rotary attention with
// grouped KV heads, SwiGLU feed-forward. Node names follow llama.cpp's.
#include <cmath>

#include "step_builder.h"

namespace engine {
namespace {

std::string blk(int64_t il, const char* name) { return "blk." + std::to_string(il) + "." + name + ".weight"; }

}  // namespace

StepGraph build_llama(const Model& model, const KVCache& kv, const StepShape& step) {
  StepBuilder b(model, kv, step);
  const HParams& hp = b.hp();
  Graph& g = b.g();
  const int64_t n_embd = hp.n_embd, head = hp.n_embd_head, n_tokens = step.n_tokens;
  const int64_t n_embd_kv = hp.n_embd_kv();
  const float kq_scale = 1.0f / std::sqrt(static_cast<float>(head));
  Tensor* rope_freqs = b.optional_weight("rope_freqs.weight", {hp.n_rot / 2});
  Tensor* tok_embd = b.weight("token_embd.weight", {n_embd, hp.n_vocab});

  g.set_module("model.embed_tokens");
  Tensor* inp = named(g.get_rows(tok_embd, b.out().tokens), "inp_embd");
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    g.set_layer(static_cast<int>(il));
    const std::string sfx = "-" + std::to_string(il), layer = "model.layers." + std::to_string(il);
    g.set_module(layer + ".input_layernorm");
    Tensor* cur = named(g.rms_norm(inp, hp.norm_eps), "norm" + sfx);
    cur = named(g.mul(cur, b.weight(blk(il, "attn_norm"), {n_embd})), "attn_norm" + sfx);

    g.set_module(layer + ".self_attn.q_proj");
    Tensor* q = named(g.mul_mat(b.weight(blk(il, "attn_q"), {n_embd, n_embd}), cur), "Qcur" + sfx);
    g.set_module(layer + ".self_attn.k_proj");
    Tensor* k = named(g.mul_mat(b.weight(blk(il, "attn_k"), {n_embd, n_embd_kv}), cur), "Kcur" + sfx);
    g.set_module(layer + ".self_attn.v_proj");
    Tensor* v = named(g.mul_mat(b.weight(blk(il, "attn_v"), {n_embd, n_embd_kv}), cur), "Vcur" + sfx);
    g.set_module(layer + ".self_attn");  // rotary embedding, KV cache, attention
    q = named(g.reshape_3d(q, head, hp.n_head, n_tokens), "Qcur" + sfx);
    q = named(g.rope(q, b.out().pos, rope_freqs, static_cast<int>(hp.n_rot), kRopeNormal, hp.rope_freq_base,
                     hp.rope_freq_scale),
              "Qcur" + sfx);
    k = named(g.reshape_3d(k, head, hp.n_head_kv, n_tokens), "Kcur" + sfx);
    k = named(g.rope(k, b.out().pos, rope_freqs, static_cast<int>(hp.n_rot), kRopeNormal, hp.rope_freq_base,
                     hp.rope_freq_scale),
              "Kcur" + sfx);
    g.expand(q);
    g.expand(k);
    g.expand(v);

    cur = b.attention(il, q, k, v, kq_scale);
    g.set_module(layer + ".self_attn.o_proj");
    cur = named(g.mul_mat(b.weight(blk(il, "attn_output"), {n_embd, n_embd}), cur), "kqv_out" + sfx);
    g.set_module(layer);  // residual connections
    Tensor* ffn_inp = b.attention_residual(il, cur, inp);

    g.set_module(layer + ".post_attention_layernorm");
    cur = named(g.rms_norm(ffn_inp, hp.norm_eps), "norm" + sfx);
    cur = named(g.mul(cur, b.weight(blk(il, "ffn_norm"), {n_embd})), "ffn_norm" + sfx);
    g.set_module(layer + ".mlp.gate_proj");
    Tensor* gate = named(g.mul_mat(b.weight(blk(il, "ffn_gate"), {n_embd, hp.n_ff}), cur), "ffn_gate" + sfx);
    g.set_module(layer + ".mlp.act_fn");
    gate = named(g.silu(gate), "ffn_silu" + sfx);
    g.set_module(layer + ".mlp.up_proj");
    Tensor* up = named(g.mul_mat(b.weight(blk(il, "ffn_up"), {n_embd, hp.n_ff}), cur), "ffn_up" + sfx);
    g.set_module(layer + ".mlp");
    Tensor* par = named(g.mul(gate, up), "ffn_gate_par" + sfx);
    g.set_module(layer + ".mlp.down_proj");
    cur = named(g.mul_mat(b.weight(blk(il, "ffn_down"), {hp.n_ff, n_embd}), par), "ffn_out" + sfx);
    g.set_module(layer);
    inp = named(g.add(cur, ffn_inp), "l_out" + sfx);
  }
  g.set_layer(-1);
  g.set_module("model.norm");
  Tensor* cur = named(g.rms_norm(inp, hp.norm_eps), "norm");
  cur = named(g.mul(cur, b.weight("output_norm.weight", {n_embd})), "result_norm");
  Tensor* output = b.optional_weight("output.weight", {n_embd, hp.n_vocab});
  if (!output) output = tok_embd;  // tied embeddings
  g.set_module("lm_head");
  return b.finish(named(g.mul_mat(output, cur), "result_output"));
}

}  // namespace engine
