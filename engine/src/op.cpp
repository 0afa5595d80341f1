#include "engine/op.h"

#include <array>
#include <string>

#include "engine/error.h"

namespace engine {
namespace {

constexpr std::array<OpInfo, static_cast<size_t>(Op::COUNT)> kOps{{
    {Op::NONE, "NONE", "leaf", 0, false, false},
    {Op::GET_ROWS, "GET_ROWS", "get_rows(x)", 2, false, false},
    {Op::ADD, "ADD", "x+y", 2, false, false},
    {Op::MUL, "MUL", "x*y (MUL)", 2, false, false},
    {Op::SCALE, "SCALE", "scale(x)", 1, false, false},
    {Op::RMS_NORM, "RMS_NORM", "rms_norm(x)", 1, false, false},
    {Op::NORM, "NORM", "norm(x)", 1, false, false},
    {Op::MUL_MAT, "MUL_MAT", "X*Y (MAT_MUL)", 2, false, false},
    {Op::ROPE, "ROPE", "rope(x)", 2, false, false},
    {Op::SOFT_MAX, "SOFT_MAX", "soft_max(x)", 1, false, true},
    {Op::VIEW, "VIEW", "view(x)", 1, true, false},
    {Op::RESHAPE, "RESHAPE", "reshape(x)", 1, true, false},
    {Op::PERMUTE, "PERMUTE", "permute(x)", 1, true, false},
    {Op::TRANSPOSE, "TRANSPOSE", "transpose(x)", 1, true, false},
    {Op::CONT, "CONT", "cont(x)", 1, false, false},
    {Op::CPY, "CPY", "x->y (STORE)", 2, false, false},
    {Op::SILU, "SILU", "unary(x) (SILU?)", 1, false, false},
    {Op::GELU, "GELU", "unary(x) (GELU?)", 1, false, false},
    {Op::DIV, "DIV", "x/y", 2, false, false},
    {Op::SUM_ROWS, "SUM_ROWS", "sum_rows(x)", 1, false, false},
    {Op::ARGSORT, "ARGSORT", "argsort(x) (ROUTE)", 1, false, false},
    {Op::MUL_MAT_ID, "MUL_MAT_ID", "X[id]*Y (EXPERT MAT_MUL)", 3, false, false},
}};

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < kOps.size(); ++i)
    if (kOps[i].op != static_cast<Op>(i)) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kOps lists every Op once, in the enum's order (a missing row reads NONE)");

}  // namespace

const OpInfo& op_info(Op op) {
  auto i = static_cast<size_t>(op);
  if (i >= kOps.size()) throw Error("unknown op id " + std::to_string(i));
  return kOps[i];
}

}  // namespace engine
