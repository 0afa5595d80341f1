#pragma once
// engine-cost's outputs: a readable summary, JSON with every node, or CSV rows per node.
#include <ostream>

#include "cost/analysis.h"

namespace cost {

// Model and step, totals, per-op-type and per-layer tables, memory, predicted speed.
void write_text(std::ostream& out, const Analysis& a);
// One object: model, step, totals, by_op, by_layer, memory, speed, nodes[].
void write_json(std::ostream& out, const Analysis& a);
// A header line, then one line per node.
void write_csv(std::ostream& out, const Analysis& a);
// The hardware profiles, one line each.
void write_hardware_list(std::ostream& out);

}  // namespace cost
