#include "engine/preset.h"

#include <nlohmann/json.hpp>

#include "engine/embedded.h"
#include "engine/error.h"

namespace engine {
namespace {

Preset parse_preset(const EmbeddedFile& file) {
  const auto j = nlohmann::json::parse(file.content);
  Preset p;
  p.name = j.at("name");
  p.description = j.at("description");
  SynthSpec& s = p.spec;
  s.arch = j.at("arch");
  s.n_embd = j.at("embedding_length");
  s.n_layer = j.at("block_count");
  s.n_head = j.at("head_count");
  s.n_head_kv = j.at("head_count_kv");
  s.n_embd_head = j.value("head_dim", int64_t{0});
  s.n_ff = j.at("feed_forward_length");
  s.n_vocab = j.at("vocab_size");
  s.n_ctx_train = j.at("context_length");
  s.rope_freq_base = j.value("rope_freq_base", 10000.0f);
  s.rope_scaling_factor = j.value("rope_scaling_factor", 0.0f);
  s.n_swa = j.value("sliding_window", int64_t{0});
  s.n_ctx_orig = j.value("original_context_length", int64_t{0});
  s.n_expert = j.value("expert_count", int64_t{0});
  s.n_expert_used = j.value("expert_used_count", int64_t{0});
  s.n_ff_exp = j.value("expert_feed_forward_length", int64_t{0});
  s.norm_eps = j.value("norm_epsilon", 1e-5f);
  s.tied_embeddings = j.value("tied_embeddings", false);
  const std::string type = j.at("weight_type");
  const auto dtype = dtype_from_name(type);
  if (!dtype) throw Error("preset " + std::string(file.name) + ": unknown weight_type '" + type + "'");
  s.type = *dtype;
  return p;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = [] {
    std::vector<Preset> out;
    for (const EmbeddedFile& f : embedded_presets()) out.push_back(parse_preset(f));
    return out;
  }();
  return all;
}

const Preset& find_preset(std::string_view name) {
  std::string known;
  for (const Preset& p : presets()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw Error("unknown preset '" + std::string(name) + "' (known: " + known + ")");
}

std::unique_ptr<Model> preset_model(const Preset& preset, std::optional<DType> type) {
  SynthSpec spec = preset.spec;
  if (type) spec.type = *type;
  const std::vector<uint8_t> image = synthetic_model(spec, false).to_bytes(true);
  return Model::from_gguf(GGUFFile::from_bytes("preset " + preset.name, image, GGUFLoad::kHeaderOnly));
}

}  // namespace engine
