// One cost formula per op, for both cost models. docs/cost-model.md explains each.
#include <cmath>
#include <string>

#include "cost/cost.h"
#include "engine/op_params.h"
#include "engine/error.h"

namespace cost {
namespace {

using engine::Op;
using engine::Tensor;

double elements(const Tensor& t) { return static_cast<double>(t.nelements()); }
double rows(const Tensor& t) { return static_cast<double>(t.nrows()); }

// Seed: constant operands are read once per graph, intermediates are free.
void read_constants_once(const Tensor& node, Counts& c, std::unordered_set<const Tensor*>& already_read) {
  for (const Tensor* s : node.src)
    if (s && is_constant(*s) && already_read.insert(s).second) c.add(Metric::kRead, dense_bytes(*s));
}

// Default: every operand is read and the result written, at their real sizes.
void read_operands_write_result(const Tensor& node, Counts& c) {
  for (const Tensor* s : node.src)
    if (s) c.add(Metric::kRead, dense_bytes(*s));
  c.add(Metric::kWrite, dense_bytes(node));
}

// LayerNorm: sum (mean), centre, square and sum (variance), one 1/sqrt per row, scale.
void add_norm_arithmetic(const Tensor& node, Counts& c) {
  c.add(Metric::kFmul, 2 * elements(node));
  c.add(Metric::kFadd, 3 * elements(node));
  c.add(Metric::kFdiv, rows(node));
  c.add(Metric::kSqrt, rows(node));
}

// GELU, tanh approximation, tanh from one exponential and one division.
void add_gelu_arithmetic(const Tensor& node, Counts& c) {
  c.add(Metric::kFmul, 6 * elements(node));
  c.add(Metric::kFadd, 2 * elements(node));
  c.add(Metric::kFdiv, elements(node));
  c.add(Metric::kFexp, elements(node));
}

double matmul_macs(const Tensor& node) {
  return static_cast<double>(node.src[0]->ne[0]) * elements(node);  // K per output element
}

// Sorting a row of n: about n log2 n comparisons, each counted as an add (a subtraction).
double sort_comparisons(const Tensor& node) {
  const double n = static_cast<double>(node.ne[0]);
  return n > 1 ? rows(node) * n * std::log2(n) : 0;
}

Counts seed_cost(const Tensor& node, std::unordered_set<const Tensor*>& already_read) {
  Counts c;
  const double n = elements(node);
  switch (node.op) {
    case Op::GET_ROWS:
      c.add(Metric::kRead, n * sizeof(float) + dense_bytes(*node.src[1]));
      return c;
    case Op::ADD: c.add(Metric::kFadd, n); break;
    case Op::MUL:
    case Op::SCALE: c.add(Metric::kFmul, n); break;
    case Op::RMS_NORM:
      c.add(Metric::kFmul, 2 * n);
      c.add(Metric::kFdiv, rows(node));
      c.add(Metric::kSqrt, rows(node));
      break;
    case Op::NORM: add_norm_arithmetic(node, c); break;
    case Op::MUL_MAT:
    case Op::MUL_MAT_ID: c.add(Metric::kFmul, matmul_macs(node)); break;
    case Op::DIV: c.add(Metric::kFdiv, n); break;
    case Op::SUM_ROWS: c.add(Metric::kFadd, elements(*node.src[0])); break;
    case Op::ARGSORT: c.add(Metric::kFadd, sort_comparisons(node)); break;
    case Op::ROPE:
      c.add(Metric::kFmul, 3 * n);
      c.add(Metric::kFsin, n);
      break;
    case Op::SOFT_MAX:
      c.add(Metric::kFpow, rows(node));
      c.add(Metric::kFmul, 3 * n);
      c.add(Metric::kFadd, 3 * n);
      c.add(Metric::kFexp, n);
      break;
    case Op::SILU:
      c.add(Metric::kFadd, 2 * n);
      c.add(Metric::kFdiv, n);
      c.add(Metric::kFexp, n);
      break;
    case Op::GELU: add_gelu_arithmetic(node, c); break;
    case Op::CPY:
      c.add(Metric::kWrite, 8 * dense_bytes(node));  // the seed analyzer counts stores in bits
      return c;
    case Op::CONT:
    case Op::VIEW:
    case Op::RESHAPE:
    case Op::PERMUTE:
    case Op::TRANSPOSE:
    case Op::NONE:
    case Op::COUNT: return c;
  }
  read_constants_once(node, c, already_read);
  return c;
}

Counts default_cost(const Tensor& node) {
  Counts c;
  const double n = elements(node);
  switch (node.op) {
    case Op::GET_ROWS: {
      const Tensor& table = *node.src[0];
      if (engine::dtype_info(table.type).quantized) c.add(Metric::kFmul, n);  // block scale per element
      c.add(Metric::kRead, engine::row_bytes(table.type, table.ne[0]) * rows(node) + dense_bytes(*node.src[1]));
      c.add(Metric::kWrite, dense_bytes(node));
      return c;
    }
    case Op::ADD: c.add(Metric::kFadd, n); break;
    case Op::MUL:
    case Op::SCALE: c.add(Metric::kFmul, n); break;
    case Op::RMS_NORM:
      c.add(Metric::kFmul, 2 * n);  // square, then scale
      c.add(Metric::kFadd, n);      // sum of squares
      c.add(Metric::kFdiv, rows(node));
      c.add(Metric::kSqrt, rows(node));
      break;
    case Op::NORM: add_norm_arithmetic(node, c); break;
    case Op::MUL_MAT:
      c.add(Metric::kFmul, matmul_macs(node));
      c.add(Metric::kFadd, matmul_macs(node));
      break;
    case Op::MUL_MAT_ID: {
      // Only the chosen experts' matrices are read: for routing spread evenly, the expected
      // number of distinct experts the step's tokens choose.
      const Tensor& experts = *node.src[0];
      const double n_expert = static_cast<double>(experts.ne[2]), used = static_cast<double>(node.ne[1]);
      const double chosen = n_expert * (1 - std::pow(1 - used / n_expert, static_cast<double>(node.ne[2])));
      c.add(Metric::kFmul, matmul_macs(node));
      c.add(Metric::kFadd, matmul_macs(node));
      c.add(Metric::kRead, dense_bytes(experts) / n_expert * chosen + dense_bytes(*node.src[1]) + dense_bytes(*node.src[2]));
      c.add(Metric::kWrite, dense_bytes(node));
      return c;
    }
    case Op::DIV: c.add(Metric::kFdiv, n); break;
    case Op::SUM_ROWS: c.add(Metric::kFadd, elements(*node.src[0])); break;
    case Op::ARGSORT: c.add(Metric::kFadd, sort_comparisons(node)); break;
    case Op::ROPE: {
      // Rotated pairs: 4 multiplies and 2 adds each; the angle (and its sin and cos) once
      // per token and pair, shared by every head.
      const double n_rot = engine::rope_params(node).n_rot;
      const double pairs = n_rot / 2 * static_cast<double>(node.ne[1] * node.ne[2]);
      const double angles = n_rot / 2 * static_cast<double>(node.ne[2]);
      c.add(Metric::kFmul, 4 * pairs + angles);
      c.add(Metric::kFadd, 2 * pairs);
      c.add(Metric::kFsin, 2 * angles);
      if (node.src[2]) c.add(Metric::kFdiv, angles);
      break;
    }
    case Op::SOFT_MAX:
      c.add(Metric::kFmul, 2 * n);  // scale, then normalise
      c.add(Metric::kFadd, 3 * n);  // mask, max subtraction, sum
      c.add(Metric::kFexp, n);
      c.add(Metric::kFdiv, rows(node));
      break;
    case Op::SILU:
      c.add(Metric::kFadd, n);
      c.add(Metric::kFdiv, n);
      c.add(Metric::kFexp, n);
      break;
    case Op::GELU: add_gelu_arithmetic(node, c); break;
    case Op::CPY:
    case Op::CONT:
      c.add(Metric::kRead, dense_bytes(*node.src[0]));
      c.add(Metric::kWrite, dense_bytes(node));
      return c;
    case Op::VIEW:
    case Op::RESHAPE:
    case Op::PERMUTE:
    case Op::TRANSPOSE:
    case Op::NONE:
    case Op::COUNT: return c;
  }
  read_operands_write_result(node, c);
  return c;
}

}  // namespace

Counts op_cost(const Tensor& node, CostModel model, std::unordered_set<const Tensor*>& already_read) {
  return model == CostModel::kSeed ? seed_cost(node, already_read) : default_cost(node);
}

}  // namespace cost
