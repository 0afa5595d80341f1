#pragma once
// The graph's nodes grouped by the module they belong to (Tensor::module, a dotted path
// like "model.layers.3.self_attn.q_proj"), as a tree drawn with box-drawing characters.
// Any per-node values (costs, predicted or measured times) can fill its columns.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/graph.h"

namespace cost {

struct ModuleRow {
  std::string art;          // "│├── " style prefix; empty for the root
  std::string name;         // last path component ("q_proj", "3", "self_attn")
  std::string path;         // full dotted path ("" for the root)
  std::vector<size_t> self;   // indices of the nodes that belong to exactly this module
  std::vector<size_t> total;  // indices of the nodes of this module and its descendants
};

// The rows in display order (depth first, children in order of first appearance).
std::vector<ModuleRow> module_rows(const engine::Graph& graph, const std::string& root_name);

struct ModuleColumn {
  std::string header;
  std::function<std::string(const ModuleRow&)> value;  // "" leaves the cell blank
};

// A table "Module | header... " with one line per row, cells padded to align.
void write_module_table(std::ostream& out, const std::vector<ModuleRow>& rows, const std::vector<ModuleColumn>& columns);

}  // namespace cost
