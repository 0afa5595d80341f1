// CONT and CPY on the CPU: copy src0's elements, in row-major order, into dst's layout
// (strides from nb[]), converting the dtype. Element counts must match, shapes need not.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "cpu/kernels.h"
#include "cpu/row_split.h"
#include "cpu/vec_dot.h"
#include "engine/error.h"
#include "engine/quants.h"

namespace engine::cpu {
namespace {

bool is_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }
bool is_block(DType t) { return dtype_info(t).block_size > 1; }

float load_float(DType t, const char* p) {
  uint16_t h;
  switch (t) {
    case DType::F16: std::memcpy(&h, p, 2); return fp16_to_fp32(h);
    case DType::BF16: std::memcpy(&h, p, 2); return bf16_to_fp32(h);
    default: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
  }
}

void store_float(DType t, char* p, float v) {
  uint16_t h;
  switch (t) {
    case DType::F16: h = fp32_to_fp16(v); std::memcpy(p, &h, 2); return;
    case DType::BF16: h = fp32_to_bf16(v); std::memcpy(p, &h, 2); return;
    default: std::memcpy(p, &v, 4); return;
  }
}

// Byte offsets of t's rows (counted over dims 1..3) from row r on, one step at a time: a
// transposed V store copies hundreds of one-element rows, where dividing per row would dominate.
class RowCursor {
 public:
  RowCursor(const Tensor* t, int64_t r)
      : t_(t), i1_(r % t->ne[1]), i2_((r / t->ne[1]) % t->ne[2]), i3_(r / (t->ne[1] * t->ne[2])) {}
  size_t offset() const {
    return static_cast<size_t>(i1_) * t_->nb[1] + static_cast<size_t>(i2_) * t_->nb[2] + static_cast<size_t>(i3_) * t_->nb[3];
  }
  void next() {
    if (++i1_ < t_->ne[1]) return;
    i1_ = 0;
    if (++i2_ < t_->ne[2]) return;
    i2_ = 0;
    ++i3_;
  }

 private:
  const Tensor* t_;
  int64_t i1_, i2_, i3_;
};

bool same_shape(const Tensor* a, const Tensor* b) {
  for (int i = 0; i < kMaxDims; ++i)
    if (a->ne[i] != b->ne[i]) return false;
  return true;
}

// F32 into dense F32 or F16 rows from a 2-D source whose rows are adjacent floats (a transposed
// tensor: a V cache store, hundreds of rows a token each).
bool transposed_float_store(const Tensor* src, const Tensor* dst) {
  return src->type == DType::F32 && (dst->type == DType::F32 || dst->type == DType::F16) && src->nb[1] == sizeof(float) &&
         src->ne[2] * src->ne[3] == 1 && dst->nb[0] == dtype_info(dst->type).block_bytes;
}

// Element i of rows r.. is a run of floats in the source: converted a run at a time (with the
// SIMD conversion, which rounds as fp32_to_fp16), then stored row by row; the rows' lines stay
// in cache while each run of the block's elements fills them.
void copy_transposed(const Tensor* src, Tensor* dst, WorkRange rows) {
  constexpr int64_t kRun = 64;
  const size_t ed = dtype_info(dst->type).block_bytes;
  alignas(64) char run[kRun * sizeof(float)];
  for (int64_t r0 = rows.begin; r0 < rows.end; r0 += kRun) {
    const int64_t n = std::min(kRun, rows.end - r0);
    RowCursor pr(dst, r0);
    for (int64_t k = 0; k < n; ++k, pr.next()) __builtin_prefetch(static_cast<char*>(dst->data) + pr.offset(), 1, 3);
    for (int64_t i = 0; i < src->ne[0]; ++i) {
      const auto* s = reinterpret_cast<const float*>(static_cast<const char*>(src->data) + i * src->nb[0]) + r0;
      if (dst->type == DType::F16)
        quantize_activation(DType::F16, s, run, n);
      else
        std::memcpy(run, s, static_cast<size_t>(n) * sizeof(float));
      RowCursor dr(dst, r0);
      for (int64_t k = 0; k < n; ++k, dr.next())
        std::memcpy(static_cast<char*>(dst->data) + dr.offset() + static_cast<size_t>(i) * ed, run + k * ed, ed);
    }
  }
}

// Element-wise copy between one-element-per-block dtypes.
void copy_elements(const ComputeParams& p, const Tensor* src, Tensor* dst) {
  const DType st = src->type, dt = dst->type;
  const size_t es = dtype_info(st).block_bytes, ed = dtype_info(dt).block_bytes;
  auto copy_one = [&](const char* s, char* d) {
    if (st == dt)
      std::memcpy(d, s, es);
    else
      store_float(dt, d, load_float(st, s));
  };
  const char* src_data = static_cast<const char*>(src->data);
  char* dst_data = static_cast<char*>(dst->data);
  const int64_t ne00 = src->ne[0];
  // One row, its dst elements d_stride bytes apart: dense rows of one dtype are a memcpy, F32 ->
  // F16 (a KV store) the SIMD conversion (which rounds as fp32_to_fp16), else element by element
  // (so are rows too short for the conversion's call to pay; a transposed V store goes by runs
  // of rows instead: copy_transposed).
  auto copy_row = [&](const char* s, char* d, size_t d_stride) {
    constexpr int64_t kShortRow = 16;
    const bool dense = src->nb[0] == es && d_stride == ed;
    if (dense && st == dt)
      std::memcpy(d, s, static_cast<size_t>(ne00) * es);
    else if (dense && st == DType::F32 && dt == DType::F16 && ne00 >= kShortRow)
      quantize_activation(DType::F16, reinterpret_cast<const float*>(s), d, ne00);
    else
      for (int64_t i = 0; i < ne00; ++i) copy_one(s + i * src->nb[0], d + i * d_stride);
  };
  const WorkRange rows = split_work(src->nrows(), p.ith, p.nth);

  if (same_shape(src, dst) && transposed_float_store(src, dst)) return copy_transposed(src, dst, rows);
  if (same_shape(src, dst)) {
    RowCursor sr(src, rows.begin), dr(dst, rows.begin);
    for (int64_t r = rows.begin; r < rows.end; ++r, sr.next(), dr.next())
      copy_row(src_data + sr.offset(), dst_data + dr.offset(), dst->nb[0]);
    return;
  }
  // Shapes differ, dst dense (a permuted tensor made contiguous): src row r fills dst's elements
  // r * ne00 .. r * ne00 + ne00 - 1 in order.
  if (dst->is_contiguous()) {
    RowCursor sr(src, rows.begin);
    for (int64_t r = rows.begin; r < rows.end; ++r, sr.next())
      copy_row(src_data + sr.offset(), dst_data + static_cast<size_t>(r * ne00) * ed, ed);
    return;
  }
  // Otherwise walk dst coordinates as an odometer from this thread's first element.
  int64_t flat = rows.begin * ne00;
  int64_t c[kMaxDims];
  for (int i = 0; i < kMaxDims; ++i) {
    c[i] = flat % dst->ne[i];
    flat /= dst->ne[i];
  }
  RowCursor sr(src, rows.begin);
  for (int64_t r = rows.begin; r < rows.end; ++r, sr.next()) {
    const char* s = src_data + sr.offset();
    for (int64_t i = 0; i < ne00; ++i) {
      char* d = dst_data + c[0] * dst->nb[0] + c[1] * dst->nb[1] + c[2] * dst->nb[2] + c[3] * dst->nb[3];
      copy_one(s + i * src->nb[0], d);
      for (int k = 0; k < kMaxDims && ++c[k] == dst->ne[k]; ++k) c[k] = 0;
    }
  }
}

// Row-wise copy when a block dtype is involved: rows must line up one to one.
void copy_rows(const ComputeParams& p, const Tensor* src, Tensor* dst) {
  if (src->ne[0] != dst->ne[0] || src->nrows() != dst->nrows())
    throw Error("cpy '" + dst->name + "': rows of " + src->shape_str() + " and " + dst->shape_str() +
                " do not line up for " + std::string(dtype_name(src->type)) + " -> " +
                std::string(dtype_name(dst->type)));
  if (src->nb[0] != dtype_info(src->type).block_bytes || dst->nb[0] != dtype_info(dst->type).block_bytes)
    throw Error("cpy '" + dst->name + "': block dtype copies need dense rows");
  const int64_t n = src->ne[0];
  const WorkRange rows = split_work(src->nrows(), p.ith, p.nth);
  RowCursor sr(src, rows.begin), dr(dst, rows.begin);
  for (int64_t r = rows.begin; r < rows.end; ++r, sr.next(), dr.next()) {
    const char* s = static_cast<const char*>(src->data) + sr.offset();
    char* d = static_cast<char*>(dst->data) + dr.offset();
    if (src->type == dst->type)
      std::memcpy(d, s, row_bytes(src->type, n));
    else if (src->type == DType::F32)
      quantize_row(dst->type, reinterpret_cast<const float*>(s), d, n);
    else
      dequantize_row(src->type, s, reinterpret_cast<float*>(d), n);
  }
}

}  // namespace

bool copy_supports(DType from, DType to) {
  if (from == to) return true;
  if (is_float(from) && is_float(to)) return true;
  if (from == DType::F32 && is_block(to)) return true;
  return is_block(from) && to == DType::F32;
}

void cont(const ComputeParams& p, Tensor* dst) {
  const Tensor* src = dst->src[0];
  if (!src) throw Error("cpy '" + dst->name + "': missing source");
  if (!copy_supports(src->type, dst->type))
    throw Error("cpy '" + dst->name + "': no CPU copy from " + std::string(dtype_name(src->type)) + " to " +
                std::string(dtype_name(dst->type)));
  if (src->nelements() != dst->nelements())
    throw Error("cpy '" + dst->name + "': " + src->shape_str() + " and " + dst->shape_str() + " differ in size");
  if (is_block(src->type) || is_block(dst->type))
    copy_rows(p, src, dst);
  else
    copy_elements(p, src, dst);
}

}  // namespace engine::cpu
