#pragma once
// A model: its GGUF file (mapped read-only), hyper-parameters read from the metadata, and
// checked access to its weight tensors' infos. Backends copy the weights (Backend::load_weights).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/gguf.h"

namespace engine {

struct HParams {
  std::string arch;         // general.architecture
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t n_ff = 0;
  int64_t n_embd_head = 0;  // attention.key_length, else n_embd / n_head
  int64_t n_rot = 0;        // rotated dimensions per head
  float norm_eps = 1e-5f;   // RMS norm or layer norm epsilon
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / rope.scaling.factor (linear scaling)
  float rope_attn_factor = 1.0f;  // rope.scaling.attn_factor: RoPE's cos and sin scaled by it
  int64_t n_ctx_orig = 0;         // rope.scaling.original_context_length, else context_length
  int64_t n_swa = 0;             // attention.sliding_window: positions a sliding layer sees; 0: none
  int64_t n_expert = 0;          // expert_count: experts of each feed-forward; 0: a dense feed-forward
  int64_t n_expert_used = 0;     // expert_used_count: experts each token is routed to
  int64_t n_ff_exp = 0;          // expert_feed_forward_length, else feed_forward_length: an expert's rows

  int64_t n_embd_q() const { return n_embd_head * n_head; }  // Q's rows, attention's output
  int64_t n_embd_kv() const { return n_embd_head * n_head_kv; }
};

// Weight elements of a model: all of them, and those one token's step reads (in a mixture of
// experts, n_expert_used of each layer's n_expert experts).
struct ParameterCount {
  double total = 0;
  double active = 0;
};

class Model {
 public:
  // Maps the file and reads its hyper-parameters. With kHeaderOnly the weights need not
  // be present (cost analysis). Throws Error naming the file and the bad key or tensor;
  // every weight the architecture needs is checked for presence and shape here.
  static std::unique_ptr<Model> load(const std::string& path, GGUFLoad mode = GGUFLoad::kFull);
  // The built-in model (embedded_default_model()); its file's path reads
  // "stories260K.gguf (built in)".
  static std::unique_ptr<Model> load_builtin();
  // The model of an opened GGUF file (or in-memory image), checked the same way.
  static std::unique_ptr<Model> from_gguf(std::unique_ptr<GGUFFile> file);

  const GGUFFile& file() const { return *file_; }
  const HParams& hparams() const { return hp_; }
  // Weight tensor info, or nullptr when absent.
  const GGUFTensorInfo* find_weight(const std::string& name) const { return file_->find_tensor(name); }
  // Weight tensor info, checked to exist with exactly shape `ne`.
  const GGUFTensorInfo& weight(const std::string& name, std::vector<int64_t> ne) const;
  // Bytes of all tensor data in the file.
  size_t weights_bytes() const;
  // Bytes of the file's data section up to the end of its last tensor: what a backend holds
  // for the weights, each tensor at its offset in the file (GGUFTensorInfo::offset).
  size_t weight_storage_bytes() const;
  ParameterCount parameters() const;
  // The weight dtype of most parameters (for reports): the dtype holding the most bytes.
  DType dominant_dtype() const;

 private:
  std::unique_ptr<GGUFFile> file_;
  HParams hp_;
};

}  // namespace engine
