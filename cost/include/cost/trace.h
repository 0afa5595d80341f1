#pragma once
// The ASCII dataflow trace: one column per live intermediate ('<' where it is defined, '>'
// where it is read, '|' while it lives; columns assigned first-fit), each node with its
// size, shape, costs and inputs, `== layer N ==` headers; preceded by the totals.
#include <ostream>

#include "cost/cost.h"

namespace cost {

void write_trace(std::ostream& out, const engine::Graph& graph, const GraphCost& cost);

}  // namespace cost
