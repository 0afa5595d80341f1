#pragma once
// The op enum and the one table of op facts. Backends dispatch on Op; the cost model
// keeps one formula per op in cost/.
#include <cstdint>
#include <string_view>

namespace engine {

enum class Op : uint8_t {
  NONE,       // a leaf: weight, input or KV storage
  GET_ROWS,   // rows of src0 selected by the i32 ids in src1
  ADD,        // src0 + src1 (src1 broadcast by repetition)
  MUL,        // src0 * src1 (src1 broadcast by repetition)
  SCALE,      // src0 * params f32[0]
  RMS_NORM,   // src0 / sqrt(mean(src0^2) + eps), eps = f32[0]
  NORM,       // (src0 - mean) / sqrt(var + eps), eps = f32[0]
  MUL_MAT,    // dst[i,j] = dot(src0 row i, src1 row j), broadcast over dims 2,3
  ROPE,       // rotary embedding of src0 at positions src1, optional freq factors src2
  SOFT_MAX,   // softmax(src0 * scale + mask src1) along dim 0
  VIEW,       // strided window on src0's storage
  RESHAPE,    // same storage, new shape (src0 contiguous)
  PERMUTE,    // same storage, axes reordered
  TRANSPOSE,  // same storage, dims 0 and 1 swapped
  CONT,       // dense copy of a strided src0
  CPY,        // copy src0 into the view src1 (converting dtype); result aliases src1
  SILU,       // x * sigmoid(x)
  GELU,       // tanh approximation of GELU
  DIV,        // src0 / src1 (src1 broadcast by repetition)
  SUM_ROWS,   // sum of each row of src0: [1, ne1, ne2, ne3]
  ARGSORT,    // i32 indices of each row of src0, its largest element first
  MUL_MAT_ID, // per slot (i, t): dot(expert ids[i,t] of src0, src1 row (i or 0, t)); ids = src2
  COUNT,
};

// MUL_MAT and MUL_MAT_ID: src0 is a matrix (or experts' matrices) multiplying src1's rows.
inline bool is_mat_mul(Op op) { return op == Op::MUL_MAT || op == Op::MUL_MAT_ID; }

struct OpInfo {
  Op op;
  std::string_view name;         // "MUL_MAT"
  std::string_view trace_label;  // "X*Y (MAT_MUL)" as the dataflow trace prints it
  int n_src;                     // required sources
  bool is_view;                  // result aliases a source's storage: no compute, no buffer
  bool in_place;                 // result may take over its first source's storage (same bytes),
                                 // every backend reading each row of it before writing that row
};

const OpInfo& op_info(Op op);
inline std::string_view op_name(Op op) { return op_info(op).name; }

// MUL_MAT params[0]: the shared dimension k is a span of KV-cache positions. llama.cpp pads
// such spans with zero-weighted positions to a multiple of 256, which sets its CPU summation order.
constexpr int32_t kMulMatKvSpan = 1;
// MUL_MAT params[1] == kMulMatCausal: attention under a causal mask, activation column c being
// the query at KV position params[2] + c. Where rows are KV positions (q·k), outputs past the
// query's position are unspecified: the mask's -inf replaces them and SOFT_MAX does not read
// them. Where k is a KV span (kqv), the activation is zero past the query, so a dot may stop
// there with the same result.
constexpr int32_t kMulMatCausal = 1;

// Rope modes, as GGUF architectures use them.
constexpr int32_t kRopeNormal = 0;  // adjacent pairs (llama)
constexpr int32_t kRopeNeox = 2;    // halves (gpt-neox)

}  // namespace engine
