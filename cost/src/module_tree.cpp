#include "cost/module_tree.h"

#include <algorithm>
#include <memory>

namespace cost {
namespace {

struct TreeNode {
  std::string name, path;
  std::vector<size_t> self;
  std::vector<std::unique_ptr<TreeNode>> children;

  TreeNode* child(const std::string& child_name) {
    for (auto& c : children)
      if (c->name == child_name) return c.get();
    auto& c = children.emplace_back(std::make_unique<TreeNode>());
    c->name = child_name;
    c->path = path.empty() ? child_name : path + "." + child_name;
    return c.get();
  }
};

void collect(const TreeNode& n, std::vector<size_t>& out) {
  out.insert(out.end(), n.self.begin(), n.self.end());
  for (const auto& c : n.children) collect(*c, out);
}

// `lines` holds, per ancestor depth, whether that ancestor still has siblings below.
void flatten(const TreeNode& n, std::vector<bool>& lines, bool last, bool root, std::vector<ModuleRow>& rows) {
  ModuleRow row;
  if (!root) {
    for (size_t d = 1; d < lines.size(); ++d) row.art += lines[d] ? "│" : " ";
    row.art += last ? "└── " : "├── ";
  }
  row.name = n.name;
  row.path = n.path;
  row.self = n.self;
  collect(n, row.total);
  std::sort(row.total.begin(), row.total.end());
  rows.push_back(std::move(row));
  lines.push_back(!last);
  for (size_t i = 0; i < n.children.size(); ++i) flatten(*n.children[i], lines, i + 1 == n.children.size(), false, rows);
  lines.pop_back();
}

size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;  // count code points
  return w;
}

std::string pad(const std::string& s, size_t width) { return s + std::string(width - std::min(width, display_width(s)), ' '); }

}  // namespace

std::vector<ModuleRow> module_rows(const engine::Graph& graph, const std::string& root_name) {
  TreeNode root;
  root.name = root_name;
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    TreeNode* at = &root;
    const std::string& path = nodes[i]->module;
    for (size_t begin = 0; begin < path.size();) {
      const size_t end = std::min(path.find('.', begin), path.size());
      at = at->child(path.substr(begin, end - begin));
      begin = end + 1;
    }
    at->self.push_back(i);
  }
  std::vector<ModuleRow> rows;
  std::vector<bool> lines;
  flatten(root, lines, true, true, rows);
  return rows;
}

void write_module_table(std::ostream& out, const std::vector<ModuleRow>& rows, const std::vector<ModuleColumn>& columns) {
  std::vector<std::vector<std::string>> cells(rows.size());
  std::vector<size_t> widths{display_width("Module")};
  for (const ModuleColumn& c : columns) widths.push_back(display_width(c.header));
  for (size_t r = 0; r < rows.size(); ++r) {
    cells[r].push_back(rows[r].art + rows[r].name);
    for (const ModuleColumn& c : columns) cells[r].push_back(c.value(rows[r]));
    for (size_t k = 0; k < cells[r].size(); ++k) widths[k] = std::max(widths[k], display_width(cells[r][k]));
  }
  auto line = [&](const std::vector<std::string>& values) {
    std::string s;
    for (size_t k = 0; k < values.size(); ++k) s += (k ? " | " : "") + pad(values[k], widths[k]);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  std::vector<std::string> header{"Module"};
  for (const ModuleColumn& c : columns) header.push_back(c.header);
  line(header);
  std::string rule;
  for (size_t k = 0; k < widths.size(); ++k) rule += (k ? "|" : "") + std::string(widths[k] + (k ? 2 : 1), '-');
  out << rule << "\n";
  for (const auto& row : cells) line(row);
}

}  // namespace cost
