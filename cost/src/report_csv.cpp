#include <string>

#include "cost/report.h"

namespace cost {

void write_csv(std::ostream& out, const Analysis& a) {
  static constexpr Metric kMetrics[] = {Metric::kFmul, Metric::kFadd, Metric::kFdiv, Metric::kFexp, Metric::kFsin,
                                        Metric::kSqrt, Metric::kFpow, Metric::kRead, Metric::kWrite};
  out << "index,name,op,layer,dtype,shape";
  for (Metric m : kMetrics) out << "," << metric_name(m);
  out << ",tempsize" << (a.speed ? ",predicted_s,memory_bound,hardware,calibrated" : "") << "\n";
  for (size_t i = 0; i < a.cost.nodes.size(); ++i) {
    const NodeCost& nc = a.cost.nodes[i];
    const engine::Tensor& n = *nc.node;
    std::string shape = n.shape_str();
    for (char& c : shape)
      if (c == ',') c = 'x';
    out << i << "," << n.name << "," << engine::op_name(n.op) << "," << n.layer << "," << engine::dtype_name(n.type) << ","
        << shape;
    for (Metric m : kMetrics) out << "," << nc.counts.get(m);
    out << "," << nc.tempsize;
    if (a.speed)
      out << "," << a.speed->step.nodes[i].time_s << "," << (a.speed->step.nodes[i].memory_bound ? 1 : 0) << ","
          << a.speed->hardware.name << "," << a.speed->hardware.calibrated;
    out << "\n";
  }
}

}  // namespace cost
