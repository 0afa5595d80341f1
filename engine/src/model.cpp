#include "engine/model.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "engine/arch.h"
#include "engine/embedded.h"
#include "engine/error.h"

namespace engine {
namespace {

std::string shape_text(const int64_t* ne, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

HParams read_hparams(const GGUFFile& f) {
  HParams hp;
  hp.arch = f.require_string("general.architecture");
  if (!arch_supported(hp.arch))
    throw Error(f.path() + ": unsupported architecture '" + hp.arch + "' (supported: " + supported_archs_text() + ")");
  const std::string a = hp.arch + ".";
  auto positive = [&](const std::string& key, int64_t v) {
    if (v <= 0 || v > (int64_t{1} << 32)) throw Error(f.path() + ": " + key + " = " + std::to_string(v) + " is out of range");
    return v;
  };
  hp.n_embd = positive(a + "embedding_length", f.require_int(a + "embedding_length"));
  hp.n_layer = positive(a + "block_count", f.require_int(a + "block_count"));
  hp.n_head = positive(a + "attention.head_count", f.require_int(a + "attention.head_count"));
  hp.n_head_kv = positive(a + "attention.head_count_kv", f.get_int(a + "attention.head_count_kv", hp.n_head));
  hp.n_ff = positive(a + "feed_forward_length", f.require_int(a + "feed_forward_length"));
  hp.n_ctx_train = positive(a + "context_length", f.require_int(a + "context_length"));
  if (hp.n_head % hp.n_head_kv != 0)
    throw Error(f.path() + ": " + std::to_string(hp.n_head_kv) + " KV heads do not divide " + std::to_string(hp.n_head) +
                " heads");
  if (f.find(a + "attention.key_length")) {  // heads of their own size (Qwen3, Gemma 3)
    hp.n_embd_head = positive(a + "attention.key_length", f.require_int(a + "attention.key_length"));
    const int64_t v = positive(a + "attention.value_length", f.get_int(a + "attention.value_length", hp.n_embd_head));
    if (v != hp.n_embd_head)
      throw Error(f.path() + ": " + a + "attention.value_length = " + std::to_string(v) + " differs from key_length " +
                  std::to_string(hp.n_embd_head));
    if (hp.n_embd_head > (int64_t{1} << 32) / hp.n_head)
      throw Error(f.path() + ": " + std::to_string(hp.n_head) + " heads of " + std::to_string(hp.n_embd_head) +
                  " (attention.key_length) are out of range");
  } else {
    if (hp.n_embd % hp.n_head != 0)
      throw Error(f.path() + ": " + std::to_string(hp.n_head) + " heads do not divide embedding length " +
                  std::to_string(hp.n_embd));
    hp.n_embd_head = hp.n_embd / hp.n_head;
  }
  hp.n_rot = positive(a + "rope.dimension_count", f.get_int(a + "rope.dimension_count", hp.n_embd_head));
  if (hp.n_rot > hp.n_embd_head || hp.n_rot % 2 != 0)
    throw Error(f.path() + ": " + a + "rope.dimension_count = " + std::to_string(hp.n_rot) + " does not fit head size " +
                std::to_string(hp.n_embd_head));
  hp.norm_eps = static_cast<float>(
      f.get_float(a + "attention.layer_norm_rms_epsilon", f.get_float(a + "attention.layer_norm_epsilon", 1e-5)));
  hp.rope_freq_base = static_cast<float>(f.get_float(a + "rope.freq_base", 10000.0));
  const std::string scaling = f.get_string(a + "rope.scaling.type", "linear");
  if (scaling != "linear" && scaling != "none")
    throw Error(f.path() + ": " + a + "rope.scaling.type '" + scaling + "' is not supported (supported: linear, none)");
  const double factor = f.get_float(a + "rope.scaling.factor", f.get_float(a + "rope.scale_linear", 1.0));
  if (!(factor > 0) || !std::isfinite(factor))
    throw Error(f.path() + ": " + a + "rope.scaling.factor = " + std::to_string(factor) + " is not a positive number");
  hp.rope_freq_scale = static_cast<float>(1.0 / factor);
  const double attn_factor = f.get_float(a + "rope.scaling.attn_factor", 1.0);
  if (!(attn_factor > 0) || !std::isfinite(attn_factor))
    throw Error(f.path() + ": " + a + "rope.scaling.attn_factor = " + std::to_string(attn_factor) + " is not a positive number");
  hp.rope_attn_factor = static_cast<float>(attn_factor);
  hp.n_ctx_orig = positive(a + "rope.scaling.original_context_length",
                           f.get_int(a + "rope.scaling.original_context_length", hp.n_ctx_train));
  // 0 (Phi-4's files) or absent: no window
  if (const int64_t window = f.get_int(a + "attention.sliding_window", 0); window != 0)
    hp.n_swa = positive(a + "attention.sliding_window", window);
  if (const int64_t experts = f.get_int(a + "expert_count", 0); experts != 0) {
    hp.n_expert = positive(a + "expert_count", experts);
    hp.n_expert_used = positive(a + "expert_used_count", f.require_int(a + "expert_used_count"));
    if (hp.n_expert_used > hp.n_expert)
      throw Error(f.path() + ": " + std::to_string(hp.n_expert_used) + " experts used of " + std::to_string(hp.n_expert));
    hp.n_ff_exp = positive(a + "expert_feed_forward_length", f.get_int(a + "expert_feed_forward_length", hp.n_ff));
  }
  const GGUFValue* tokens = f.find_array("tokenizer.ggml.tokens");
  const GGUFTensorInfo* embd = f.find_tensor("token_embd.weight");
  if (!embd) throw Error(f.path() + ": missing tensor 'token_embd.weight'");
  hp.n_vocab = embd->ne[1];
  if (tokens && static_cast<int64_t>(tokens->array_size) != hp.n_vocab)
    throw Error(f.path() + ": vocabulary has " + std::to_string(tokens->array_size) + " tokens but token_embd.weight has " +
                std::to_string(hp.n_vocab) + " rows");
  return hp;
}

}  // namespace

std::unique_ptr<Model> Model::load(const std::string& path, GGUFLoad mode) {
  return from_gguf(GGUFFile::open(path, mode));
}

std::unique_ptr<Model> Model::load_builtin() {
  const EmbeddedFile f = embedded_default_model();
  return from_gguf(GGUFFile::from_bytes(std::string(f.name) + " (built in)",
                                        std::vector<uint8_t>(f.content.begin(), f.content.end())));
}

std::unique_ptr<Model> Model::from_gguf(std::unique_ptr<GGUFFile> file) {
  auto model = std::unique_ptr<Model>(new Model());
  model->file_ = std::move(file);
  model->hp_ = read_hparams(*model->file_);
  check_weights(*model);
  return model;
}

const GGUFTensorInfo& Model::weight(const std::string& name, std::vector<int64_t> ne) const {
  const GGUFTensorInfo* t = file_->find_tensor(name);
  if (!t) throw Error(file_->path() + ": missing tensor '" + name + "'");
  bool same = static_cast<size_t>(t->n_dims) <= ne.size();
  for (size_t i = 0; same && i < 4; ++i) same = t->ne[i] == (i < ne.size() ? ne[i] : 1);
  if (!same)
    throw Error(file_->path() + ": tensor '" + name + "' has shape " + shape_text(t->ne, t->n_dims) + ", expected " +
                shape_text(ne.data(), ne.size()));
  return *t;
}

size_t Model::weights_bytes() const {
  size_t total = 0;
  for (const auto& t : file_->tensors()) total += t.nbytes;
  return total;
}

size_t Model::weight_storage_bytes() const {
  size_t end = 0;
  for (const auto& t : file_->tensors()) end = std::max<size_t>(end, t.offset + t.nbytes);
  return end;
}

ParameterCount Model::parameters() const {
  ParameterCount p;
  for (const auto& t : file_->tensors()) {
    double n = 1;
    for (int i = 0; i < t.n_dims; ++i) n *= static_cast<double>(t.ne[i]);
    const bool experts = hp_.n_expert > 0 && t.n_dims == 3 && t.ne[2] == hp_.n_expert && t.name.ends_with("_exps.weight");
    p.total += n;
    p.active += experts ? n * static_cast<double>(hp_.n_expert_used) / static_cast<double>(hp_.n_expert) : n;
  }
  return p;
}

DType Model::dominant_dtype() const {
  std::map<DType, size_t> bytes;
  for (const auto& t : file_->tensors()) bytes[t.type] += t.nbytes;
  DType best = DType::F32;
  size_t most = 0;
  for (const auto& [type, n] : bytes)
    if (n > most) most = n, best = type;
  return best;
}

}  // namespace engine
