#pragma once
// Helpers shared by the tokenizer tests: llama.cpp's tokenizer test vectors
// (`<vocab>.gguf.inp` / `.out`), loading a tokenizer, and checking an Error's message.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/gguf.h"
#include "engine/tokenizer.h"

namespace engine::tokenizer_test {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The `.inp` file: each text is followed by "\n__ggml_vocab_test__\n".
inline std::vector<std::string> read_vocab_inputs(const std::string& path) {
  const std::string all = read_text(path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t pos = 0, hit; (hit = all.find(sep, pos)) != std::string::npos; pos = hit + sep.size()) {
    texts.push_back(all.substr(pos, hit - pos));
  }
  return texts;
}

// The `.out` file: one line of space-separated ids per text.
inline std::vector<std::vector<int32_t>> read_vocab_outputs(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<int32_t>> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ids(line);
    out.emplace_back();
    for (int32_t id; ids >> id;) out.back().push_back(id);
  }
  return out;
}

inline std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  return Tokenizer::from_gguf(*GGUFFile::open(path, GGUFLoad::kHeaderOnly));
}

inline void expect_error_mentions(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no Error thrown, expected one mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace engine::tokenizer_test
