#include "cost/trace.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "number_format.h"

namespace cost {
namespace {

using engine::Tensor;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string integer(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// A Python dict literal: the read bytes as a float, counts as integers, then tempsize.
std::string counts_dict(const NodeCost& nc) {
  std::string s = "{";
  for (const auto& [m, v] : nc.counts.items()) {
    s += "'" + std::string(metric_name(m)) + "': ";
    s += m == Metric::kRead ? py_float(v) : integer(v);
    s += ", ";
  }
  return s + "'tempsize': " + py_float(nc.tempsize) + "}";
}

std::string describe(const Tensor& t) { return t.name + ", " + py_float(dense_bytes(t)) + ", " + t.shape_str(); }

// Columns of the art: a node read by later nodes holds one from its definition to its last reader.
class Columns {
 public:
  explicit Columns(const engine::Graph& graph) {
    const auto& nodes = graph.nodes();
    for (size_t i = 0; i < nodes.size(); ++i)
      for (const Tensor* s : nodes[i]->src)
        if (s && s->op != engine::Op::NONE) last_use_[s] = i;
    // First pass: the widest the art gets.
    std::vector<bool> busy;
    size_t widest = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (last_use_.count(nodes[i])) {
        const size_t c = first_free(busy);
        if (c == busy.size()) busy.push_back(false);
        busy[c] = true;
        column_[nodes[i]] = c;
        widest = std::max(widest, busy.size());
      }
      for (const Tensor* s : nodes[i]->src)
        if (s && last_use_.count(s) && last_use_[s] == i) busy[column_[s]] = false;
    }
    live_.assign(widest, false);
  }

  bool has_column(const Tensor* t) const { return column_.count(t) != 0; }
  size_t column(const Tensor* t) const { return column_.at(t); }
  bool last_read_by(const Tensor* t, size_t node) const {
    const auto it = last_use_.find(t);
    return it != last_use_.end() && it->second == node;
  }
  void open(const Tensor* t) { live_[column_.at(t)] = true; }
  void close(const Tensor* t) { live_[column_.at(t)] = false; }

  // The art of a plain line: '|' for each live column.
  std::string state() const {
    std::string s;
    for (bool l : live_) s += l ? "| " : "  ";
    return s;
  }
  // The art of a line that marks column c with `mark` ('<' or '>'), dashes to its right.
  std::string marked(size_t c, char mark) const {
    std::string s;
    for (size_t j = 0; j < live_.size(); ++j) {
      if (j < c) s += live_[j] ? "| " : "  ";
      else if (j == c) s += std::string(1, mark) + "-";
      else s += mark == '<' && live_[j] ? "|-" : "--";
    }
    return s;
  }
  std::string blank() const { return std::string(2 * live_.size(), ' '); }

 private:
  static size_t first_free(const std::vector<bool>& busy) {
    for (size_t c = 0; c < busy.size(); ++c)
      if (!busy[c]) return c;
    return busy.size();
  }

  std::unordered_map<const Tensor*, size_t> last_use_;
  std::unordered_map<const Tensor*, size_t> column_;
  std::vector<bool> live_;
};

}  // namespace

void write_trace(std::ostream& out, const engine::Graph& graph, const GraphCost& cost) {
  out << "Size of temporary storage is up to " << static_cast<long long>(cost.max_tempsize) << " bytes.\n";
  out << "Total cost:\n";
  for (const auto& [m, v] : cost.total.items()) {
    out << "  " << metric_name(m) << ": ";
    if (m == Metric::kRead || m == Metric::kWrite) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3f GiB", v / kGiB);
      out << buf << "\n";
    } else {
      out << g_format(v) << "\n";
    }
  }
  Columns cols(graph);
  out << cols.blank() << "\n";

  const char* labels[] = {"x", "y", "z"};
  int layer = -1;
  const auto& nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* n = nodes[i];
    if (n->layer > layer) {
      layer = n->layer;
      out << cols.state() << "== layer " << layer << " ==\n" << cols.state() << "\n";
    }
    const bool sink = !cols.has_column(n);
    out << (sink ? cols.state() : cols.marked(cols.column(n), '<')) << n->name << ": "
        << engine::op_info(n->op).trace_label << "\n";
    if (!sink) cols.open(n);
    out << cols.state() << "  " << py_float(dense_bytes(*n)) << ", " << n->shape_str() << "\n";
    out << cols.state() << "  costs: " << counts_dict(cost.nodes[i]) << "\n";
    if (sink) out << cols.state() << "  not used by other computations\n";
    for (int k = 0; k < engine::kMaxSrc; ++k) {
      const Tensor* s = n->src[k];
      if (!s) continue;
      const bool tracked = cols.has_column(s);
      out << (tracked ? cols.marked(cols.column(s), '>') : cols.state()) << "  " << labels[k] << ": " << describe(*s)
          << "\n";
      if (tracked && cols.last_read_by(s, i)) cols.close(s);
    }
    if (i + 1 < nodes.size()) out << cols.state() << "\n";
  }
}

}  // namespace cost
