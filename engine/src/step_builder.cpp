#include "step_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/op_params.h"
#include "engine/error.h"

namespace engine {

StepShape largest_step(int64_t n_ctx, int64_t n_ubatch) {
  const int64_t n_tokens = std::min(n_ubatch, n_ctx);
  return StepShape{n_tokens, n_ctx - n_tokens, 1};
}

int64_t default_context(const HParams& hp) { return std::min<int64_t>(hp.n_ctx_train, 4096); }

int64_t attention_span(int64_t n_past, int64_t n_tokens, int64_t n_ctx) {
  const int64_t used = n_past + n_tokens;
  const int64_t padded = (used + 31) / 32 * 32;
  return std::min(n_ctx, std::max<int64_t>(32, padded));
}

StepBuilder::StepBuilder(const Model& model, const KVCache& kv, const StepShape& step)
    : model_(model), kv_(kv), step_(step) {
  if (step.n_tokens <= 0) throw Error("a step needs at least one token, got " + std::to_string(step.n_tokens));
  if (step.n_past < 0 || step.n_past + step.n_tokens > kv.n_ctx())
    throw Error("context of " + std::to_string(kv.n_ctx()) + " cannot hold " + std::to_string(step.n_past) +
                " cached + " + std::to_string(step.n_tokens) + " new tokens");
  if (step.n_outputs <= 0 || step.n_outputs > step.n_tokens)
    throw Error("outputs must be between 1 and the token count, got " + std::to_string(step.n_outputs));
  out_.graph = std::make_unique<Graph>();
  out_.n_kv = attention_span(step.n_past, step.n_tokens, kv.n_ctx());
  out_.n_past = step.n_past;
  out_.n_ctx = kv.n_ctx();
  Graph& graph = *out_.graph;
  out_.tokens = graph.new_tensor_1d(DType::I32, step.n_tokens, "inp_tokens");
  out_.pos = graph.new_tensor_1d(DType::I32, step.n_tokens, "inp_pos");
  out_.kq_mask = graph.new_tensor_2d(DType::F32, out_.n_kv, (step.n_tokens + kMaskRowPad - 1) / kMaskRowPad * kMaskRowPad,
                                     "KQ_mask");
  out_.out_ids = graph.new_tensor_1d(DType::I32, step.n_outputs, "inp_out_ids");
  for (Tensor* t : {out_.tokens, out_.pos, out_.kq_mask, out_.out_ids}) t->flags = kInput;
}

Tensor* StepBuilder::optional_weight(const std::string& name, std::vector<int64_t> ne) {
  if (auto it = leaves_.find(name); it != leaves_.end()) return it->second;
  if (!model_.find_weight(name)) return nullptr;
  const GGUFTensorInfo& info = model_.weight(name, std::move(ne));
  Tensor* t = g().new_tensor(info.type, info.n_dims, info.ne, name);
  t->flags = kWeight;
  t->storage_index = static_cast<int32_t>(&info - model_.file().tensors().data());
  return leaves_[name] = t;
}

Tensor* StepBuilder::weight(const std::string& name, std::vector<int64_t> ne) {
  if (!model_.find_weight(name)) throw Error(model_.file().path() + ": missing tensor '" + name + "'");
  return optional_weight(name, ne);
}

Tensor* StepBuilder::cache_leaf(int64_t il, bool v) {
  const std::string name = (v ? "cache_v_l" : "cache_k_l") + std::to_string(il);
  if (auto it = leaves_.find(name); it != leaves_.end()) return it->second;
  Tensor* t = g().new_tensor_1d(kv_.type(), kv_.n_ctx() * kv_.n_embd_kv(), name);
  t->flags = kKV;
  t->storage_index = static_cast<int32_t>(2 * il + (v ? 1 : 0));
  return leaves_[name] = t;
}

std::string blk(int64_t il, const std::string& name, const char* kind) {
  return "blk." + std::to_string(il) + "." + name + "." + kind;
}

std::string layer_suffix(int64_t il) { return "-" + std::to_string(il); }

Tensor* StepBuilder::output_rows(int64_t il, Tensor* t) {
  return il == hp().n_layer - 1 ? g().get_rows(t, out_.out_ids) : t;
}

Tensor* StepBuilder::attention_residual(int64_t il, Tensor* attn, Tensor* inp) {
  return named(g().add(output_rows(il, attn), output_rows(il, inp)), "ffn_inp" + layer_suffix(il));
}

Tensor* StepBuilder::attention(int64_t il, Tensor* q, Tensor* k, Tensor* v, float kq_scale, bool sliding) {
  if (sliding && !out_.kq_mask_swa) {  // the first sliding layer's: a file's window no layer slides in needs none
    if (hp().n_swa <= 0) throw Error(model_.file().path() + ": a sliding-window layer needs attention.sliding_window");
    out_.n_swa = hp().n_swa;
    out_.kq_mask_swa = g().new_tensor_2d(DType::F32, out_.kq_mask->ne[0], out_.kq_mask->ne[1], "KQ_mask_swa");
    out_.kq_mask_swa->flags = kInput;
  }
  Graph& gr = g();
  const int64_t n_tokens = step_.n_tokens, n_kv = out_.n_kv, n_ctx = kv_.n_ctx();
  const int64_t head = hp().n_embd_head, n_head = hp().n_head, n_head_kv = hp().n_head_kv, n_embd_kv = kv_.n_embd_kv();
  const std::string sfx = "-" + std::to_string(il);
  const DType type = kv_.type();
  const size_t elem = dtype_info(type).block_bytes;
  Tensor* kc = k_cache(il);
  Tensor* vc = v_cache(il);

  Tensor* k_view = named(gr.view_1d(kc, n_tokens * n_embd_kv, row_bytes(type, n_embd_kv) * step_.n_past),
                         "k_cache_view" + sfx);
  k_view->view_offs_per_past = row_bytes(type, n_embd_kv);
  gr.expand(named(gr.cpy(k, k_view), "k_cache_view" + sfx));
  Tensor* v_t = named(gr.transpose(v), v->name);
  Tensor* v_view = named(gr.view_2d(vc, n_tokens, n_embd_kv, n_ctx * elem, step_.n_past * elem), "v_cache_view" + sfx);
  v_view->view_offs_per_past = elem;
  gr.expand(named(gr.cpy(v_t, v_view), "v_cache_view" + sfx));

  Tensor* vv = named(gr.view_3d(vc, n_kv, head, n_head_kv, n_ctx * elem, n_ctx * elem * head, 0), "v" + sfx);
  Tensor* kk = named(gr.view_3d(kc, head, n_kv, n_head_kv, row_bytes(type, n_embd_kv), row_bytes(type, head), 0),
                     "k" + sfx);
  Tensor* qq = named(gr.permute(q, 0, 2, 1, 3), "q" + sfx);
  Tensor* kq = named(gr.mul_mat(kk, qq), "kq" + sfx);
  set_mul_mat_params(*kq, MulMatParams{false, true, static_cast<int32_t>(step_.n_past)});
  kq = named(gr.soft_max(kq, sliding ? out_.kq_mask_swa : out_.kq_mask, kq_scale), "kq_soft_max_ext" + sfx);
  Tensor* kqv = named(gr.mul_mat(vv, kq), "kqv" + sfx);
  set_mul_mat_params(*kqv, MulMatParams{true, true, static_cast<int32_t>(step_.n_past)});
  Tensor* merged = named(gr.permute(kqv, 0, 2, 1, 3), "kqv_merged" + sfx);
  return named(gr.cont_2d(merged, head * n_head, n_tokens), "kqv_merged_cont" + sfx);
}

StepGraph StepBuilder::finish(Tensor* logits) {
  logits->flags |= kOutput;
  out_.logits = logits;
  g().set_layer(-1);
  g().expand(logits);
  g().name_unnamed_nodes();
  return std::move(out_);
}

void rebase_step(StepGraph& s, int64_t n_past) {
  const int64_t n_tokens = s.tokens->ne[0];
  if (n_past < 0 || n_past + n_tokens > s.n_ctx || attention_span(n_past, n_tokens, s.n_ctx) != s.n_kv)
    throw Error("a step of " + std::to_string(n_tokens) + " tokens after " + std::to_string(n_past) +
                " cached ones does not read the " + std::to_string(s.n_kv) + "-position span this graph was built for");
  const int64_t delta = n_past - s.n_past;
  for (Tensor* node : s.graph->nodes()) {  // every view and multiply of the step is a node
    if (node->view_offs_per_past) node->view_offs += static_cast<size_t>(delta) * node->view_offs_per_past;
    if (node->op == Op::MUL_MAT && mul_mat_params(*node).causal) {
      MulMatParams p = mul_mat_params(*node);
      p.causal_past = static_cast<int32_t>(n_past);
      set_mul_mat_params(*node, p);
    }
  }
  s.n_past = n_past;
}

void set_step_inputs(Backend& backend, const StepGraph& s, std::span<const int32_t> tokens, int64_t n_past) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  backend.set_input(*s.tokens, tokens.data(), tokens.size_bytes());
  std::vector<int32_t> pos(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(n_past + i);
  backend.set_input(*s.pos, pos.data(), pos.size() * sizeof(int32_t));
  // Query i (position n_past + i) sees cache position j at or before it, and, in a window of
  // `window` positions, fewer than `window` behind it.
  const auto set_mask = [&](const Tensor& t, int64_t window) {
    const int64_t n_kv = t.ne[0];
    std::vector<float> mask(static_cast<size_t>(t.nelements()));
    for (int64_t i = 0; i < t.ne[1]; ++i)
      for (int64_t j = 0; j < n_kv; ++j) {
        const bool seen = i < n && j <= n_past + i && (window == 0 || n_past + i - j < window);
        mask[i * n_kv + j] = seen ? 0.0f : -std::numeric_limits<float>::infinity();
      }
    backend.set_input(t, mask.data(), mask.size() * sizeof(float));
  };
  set_mask(*s.kq_mask, 0);
  if (s.kq_mask_swa) set_mask(*s.kq_mask_swa, s.n_swa);
  std::vector<int32_t> out(static_cast<size_t>(s.out_ids->ne[0]));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int32_t>(n - static_cast<int64_t>(out.size()) + static_cast<int64_t>(i));
  backend.set_input(*s.out_ids, out.data(), out.size() * sizeof(int32_t));
}


namespace {

// Every architecture the engine builds: its general.architecture, the name of the whole model
// in module trees, and its builder.
struct ArchEntry {
  std::string name;
  std::string module_root;
  StepGraph (*build)(const Model&, const KVCache&, const StepShape&);
};

const std::vector<ArchEntry>& arch_table() {
  static const std::vector<ArchEntry> table = {
      {"llama", "LlamaForCausalLM", build_llama},
      {"qwen2", "Qwen2ForCausalLM", build_qwen2},
      {"qwen3", "Qwen3ForCausalLM", build_qwen3},
      {"qwen3moe", "Qwen3MoeForCausalLM", build_qwen3moe},
      {"gemma3", "Gemma3ForCausalLM", build_gemma3},
      {"phi3", "Phi3ForCausalLM", build_phi3},
      {"gpt2", "GPT2LMHeadModel", build_gpt2},
  };
  return table;
}

const ArchEntry* find_arch(const std::string& arch) {
  for (const ArchEntry& e : arch_table())
    if (e.name == arch) return &e;
  return nullptr;
}

}  // namespace

StepGraph build_step_graph(const Model& model, const KVCache& kv, const StepShape& step) {
  const ArchEntry* arch = find_arch(model.hparams().arch);
  if (!arch) throw Error(model.file().path() + ": unsupported architecture '" + model.hparams().arch + "'");
  return arch->build(model, kv, step);
}

void check_weights(const Model& model) {
  KVCache kv(model.hparams(), 1, DType::F32);
  build_step_graph(model, kv, StepShape{});  // builds against every weight, checking names and shapes
}

const std::vector<std::string>& supported_archs() {
  static const std::vector<std::string> archs = [] {
    std::vector<std::string> names;
    for (const ArchEntry& e : arch_table()) names.push_back(e.name);
    return names;
  }();
  return archs;
}

std::string supported_archs_text() {
  std::string text;
  for (const ArchEntry& e : arch_table()) text += (text.empty() ? "" : ", ") + e.name;
  return text;
}

std::string module_root(const std::string& arch) {
  const ArchEntry* entry = find_arch(arch);
  return entry ? entry->module_root : "LlamaForCausalLM";
}

bool arch_supported(const std::string& arch) { return find_arch(arch) != nullptr; }

}  // namespace engine
