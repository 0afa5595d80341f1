#include "reference_file.h"

#include <fmt/core.h>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/error.h"

namespace {

using nlohmann::json;

// A value in a message: numbers as written, other values by their kind (a nested array is not printed).
std::string shown(const json& v) { return v.is_number() ? v.dump() : std::string("a ") + v.type_name(); }

struct LineReader {
  const std::string& name;
  size_t line;

  [[noreturn]] void fail(const std::string& what) const {
    throw engine::Error(fmt::format("{} line {}: {}", name, line, what));
  }
  int32_t token_id(const json& v, const std::string& field) const {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > std::numeric_limits<int32_t>::max())
      fail(fmt::format("'{}' holds {}, not a token id", field, shown(v)));
    return static_cast<int32_t>(v.get<int64_t>());
  }
  double number(const json& v, const std::string& field) const {
    if (!v.is_number()) fail(fmt::format("'{}' holds {}, not a number", field, shown(v)));
    return v.get<double>();
  }
  const json& array(const json& object, const std::string& field) const {
    auto it = object.find(field);
    if (it == object.end() || !it->is_array()) fail(fmt::format("no array '{}'", field));
    return *it;
  }
  std::vector<int32_t> token_ids(const json& object, const std::string& field) const {
    std::vector<int32_t> ids;
    for (const json& v : array(object, field)) ids.push_back(token_id(v, field));
    return ids;
  }
};

}  // namespace

std::vector<ReferenceLine> read_reference(std::istream& in, const std::string& name) {
  std::vector<ReferenceLine> lines;
  std::string text;
  for (size_t ln = 1; std::getline(in, text); ++ln) {
    if (text.empty()) continue;
    const LineReader r{name, ln};
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) r.fail("not a JSON object");
    ReferenceLine ref;
    ref.line = ln;
    auto prompt = j.find("prompt");
    if (prompt == j.end() || !prompt->is_string()) r.fail("no string 'prompt'");
    ref.prompt = prompt->get<std::string>();
    ref.prompt_tokens = r.token_ids(j, "prompt_tokens");
    ref.generated = r.token_ids(j, "generated");
    for (const json& step : r.array(j, "top10")) {
      if (!step.is_array() || step.empty()) r.fail("'top10' holds a step that is not a non-empty array");
      auto& pairs = ref.top10.emplace_back();
      for (const json& p : step) {
        if (!p.is_array() || p.size() != 2) r.fail(fmt::format("'top10' holds {}, not an [id, logit] pair", shown(p)));
        pairs.emplace_back(r.token_id(p[0], "top10"), r.number(p[1], "top10"));
      }
    }
    if (j.contains("logits_first"))
      for (const json& v : r.array(j, "logits_first")) ref.logits_first.push_back(r.number(v, "logits_first"));
    lines.push_back(std::move(ref));
  }
  if (in.bad()) throw engine::Error("cannot read " + name);
  return lines;
}
