// The profile views as one CSV table: a row per table row, the view named in a column.
#include <string>

#include "cost/profile.h"

namespace cost {
namespace {

// Quotes a field when it holds a comma, a quote or a line break.
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

struct CsvRow {
  std::string view, label, op;
  int layer = -1;
  int64_t calls = 0;
  double ms = 0, pct = 0, flops = 0, bytes = 0, predicted_ms = 0, ratio = 0;
};

void write_row(std::ostream& out, const std::string& phase, const CsvRow& r) {
  out << phase << ',' << r.view << ',' << field(r.label) << ',' << r.op << ',' << r.layer << ',' << r.calls << ','
      << r.ms << ',' << r.pct << ',' << r.flops << ',' << r.bytes << ',' << r.predicted_ms << ',' << r.ratio << '\n';
}

void write_phase(std::ostream& out, const PhaseProfile& p) {
  for (const OpRow& r : p.ops) write_row(out, p.name, {"op", r.label, r.op, r.layer, r.calls, r.ms, r.pct});
  for (const ModuleRow& r : p.modules)
    write_row(out, p.name, {"module", r.path, "", -1, r.total.empty() ? 0 : p.steps, p.module_ms(r.total)});
  for (const LayerRow& r : p.layers)
    write_row(out, p.name, {"layer", "", "", r.layer, p.steps, r.ms, 0, r.flops, r.bytes, r.predicted_ms, r.ratio()});
  for (const OpTypeRow& r : p.op_types)
    write_row(out, p.name, {"op_type", "", r.op, -1, r.count, r.total_ms, 0, 0, 0, r.predicted_ms, r.ratio()});
  for (const NodeExec& r : p.slowest) write_row(out, p.name, {"slowest", r.name, r.op, r.layer, 1, r.ms});
}

}  // namespace

void write_profile_csv(std::ostream& out, const Profile& profile) {
  out << "phase,view,label,op,layer,calls,ms,pct,flops,bytes,predicted_ms,ratio\n";
  if (profile.prefill) write_phase(out, *profile.prefill);
  if (profile.decode) write_phase(out, *profile.decode);
}

}  // namespace cost
