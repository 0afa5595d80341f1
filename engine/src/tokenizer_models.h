#pragma once
// One factory per `tokenizer.ggml.model`; Tokenizer::from_gguf dispatches to them.
#include <memory>

#include "engine/tokenizer.h"

namespace engine {

class GGUFFile;

// "llama": SentencePiece (SPM) with scores, as llama.cpp's llm_tokenizer_spm.
std::unique_ptr<Tokenizer> make_spm_tokenizer(const GGUFFile& file);

// "gpt2": byte-level BPE with `tokenizer.ggml.merges`, pre-tokenized as `tokenizer.ggml.pre`
// says, as llama.cpp's llm_tokenizer_bpe.
std::unique_ptr<Tokenizer> make_bpe_tokenizer(const GGUFFile& file);

}  // namespace engine
