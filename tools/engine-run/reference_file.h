#pragma once
// The reference JSONL that --replay checks against: one object a line, llama.cpp's tokens and
// top-10 logits for one prompt (../shared/reference/README.md describes the fields).
#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <utility>
#include <vector>

struct ReferenceLine {
  size_t line = 0;  // 1-based, in the file
  std::string prompt;
  std::vector<int32_t> prompt_tokens;
  std::vector<int32_t> generated;
  std::vector<std::vector<std::pair<int32_t, double>>> top10;  // per generated step: (id, logit), best first
  std::vector<double> logits_first;                             // every logit of the first step; empty when absent
};

// Reads every non-empty line of `in`. Throws engine::Error naming `name`, the line and the field when a line is
// not such an object: a field missing or of the wrong type, a token id that is negative or out of int32 range.
std::vector<ReferenceLine> read_reference(std::istream& in, const std::string& name);
