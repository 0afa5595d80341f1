// Every op through the Backend API, on every backend this product knows: a one-node graph on
// random inputs (set with set_input, read with get_output), with shapes that are multiples of
// no tile or workgroup size, against a double-precision reference written here. A backend not
// built into this binary is skipped with its reason. The weights of these multiplies are
// inputs, so they keep the file layout; the packed layouts run in the replays and repack_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend_param.h"
#include "engine/backend.h"
#include "engine/error.h"
#include "engine/graph.h"
#include "engine/plan.h"
#include "engine/quants.h"
#include "random_floats.h"

namespace {

using namespace engine;

// A one-op graph whose leaves are inputs, set through the Backend API, and the run of it.
class OpGraph {
 public:
  // An input leaf of `type` holding `values` (converted to the type: quantized, f16, bf16, i32).
  Tensor* leaf(DType type, std::vector<int64_t> ne, const std::vector<float>& values) {
    Tensor* t = g_.new_tensor(type, static_cast<int>(ne.size()), ne.data(), "leaf" + std::to_string(leaves_.size()));
    t->flags = kInput;
    std::vector<uint8_t>& bytes = leaves_.emplace_back(t, std::vector<uint8_t>(t->nbytes())).second;
    if (type == DType::I32) {
      for (size_t i = 0; i < values.size(); ++i) reinterpret_cast<int32_t*>(bytes.data())[i] = static_cast<int32_t>(values[i]);
    } else {
      for (int64_t r = 0; r < t->nrows(); ++r)
        quantize_row(type, values.data() + r * t->ne[0], bytes.data() + r * t->nb[1], t->ne[0]);
    }
    return t;
  }
  // A leaf's values as the backend is given them (rounded to its type).
  std::vector<float> values_of(const Tensor* t) const {
    for (const auto& [leaf, bytes] : leaves_)
      if (leaf == t) return to_floats(*t, bytes);
    return {};
  }
  Graph& graph() { return g_; }

  // Runs `out` (and what it depends on) on the backend; returns out's values, or nothing
  // when the backend does not support a node (the reason goes to `unsupported`).
  std::vector<float> run(Backend& backend, Tensor* out, std::string& unsupported) {
    out->flags |= kOutput;
    g_.expand(out);
    for (const Tensor* node : g_.nodes())
      if (!backend.supports(*node)) {
        unsupported = std::string(op_name(node->op)) + " on " + std::string(dtype_name(node->src[0]->type));
        return {};
      }
    backend.allocate(g_, Plan::make(g_));
    for (const auto& [leaf, bytes] : leaves_)
      if (reads(leaf)) backend.set_input(*leaf, bytes.data(), bytes.size());
    backend.compute(g_, nullptr);
    backend.synchronize();
    std::vector<uint8_t> result(out->nbytes());
    backend.get_output(*out, result.data(), result.size());
    return to_floats(*out, result);
  }

 private:
  bool reads(const Tensor* leaf) const {
    for (const Tensor* node : g_.nodes())
      for (const Tensor* s : {node->src[0], node->src[1], node->src[2], node->view_src})
        if (s == leaf) return true;
    return false;
  }
  // A dense tensor's bytes as floats.
  static std::vector<float> to_floats(const Tensor& t, const std::vector<uint8_t>& bytes) {
    std::vector<float> out(t.nelements());
    for (int64_t r = 0; r < t.nrows(); ++r) dequantize_row(t.type, bytes.data() + r * t.nb[1], out.data() + r * t.ne[0], t.ne[0]);
    return out;
  }

  Graph g_;
  std::vector<std::pair<Tensor*, std::vector<uint8_t>>> leaves_;
};

class BackendOps : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    try {
      backend_ = make_backend(GetParam(), BackendParams{0, 3});
    } catch (const Error& e) {
      GTEST_SKIP() << e.what();
    }
  }

  // Runs the graph and compares every element with `expected` within tolerance[i].
  void check(OpGraph& og, Tensor* out, const std::vector<double>& expected, const std::vector<double>& tolerance,
             const std::string& what) {
    std::string unsupported;
    const std::vector<float> got = og.run(*backend_, out, unsupported);
    if (!unsupported.empty()) {  // every backend runs every op of the Llama and GPT-2 graphs, at every weight dtype
      ADD_FAILURE() << GetParam() << " does not support " << what << ": " << unsupported;
      return;
    }
    ASSERT_EQ(got.size(), expected.size()) << what;
    int reported = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (!(std::fabs(got[i] - expected[i]) <= tolerance[i]) && reported++ < 5)
        ADD_FAILURE() << what << " element " << i << ": " << got[i] << ", expected " << expected[i] << " within "
                      << tolerance[i];
  }
  void check(OpGraph& og, Tensor* out, const std::vector<double>& expected, double rel, const std::string& what) {
    std::vector<double> tolerance(expected.size());
    for (size_t i = 0; i < expected.size(); ++i) tolerance[i] = rel * std::max(1.0, std::fabs(expected[i]));
    check(og, out, expected, tolerance, what);
  }
  std::unique_ptr<Backend> backend_;
};

// Activations of `n` elements.
std::vector<float> acts(size_t n, uint32_t seed) { return random_floats(n, seed); }

// Weight dtypes with their element block: K must be a multiple of it.
struct WeightType {
  DType type;
  int64_t k;
  double tolerance;  // of sum |w x|: the activations are rounded to the weight's dot format
};
const WeightType kWeightTypes[] = {
    {DType::F32, 45, 1e-5},   {DType::F16, 45, 4e-3},   {DType::BF16, 45, 1e-2},  {DType::Q4_0, 96, 2e-2},
    {DType::Q4_1, 96, 2e-2},  {DType::Q5_0, 96, 2e-2},  {DType::Q5_1, 96, 2e-2},  {DType::Q8_0, 96, 2e-2},
    {DType::Q2_K, 768, 2e-2}, {DType::Q3_K, 768, 2e-2}, {DType::Q4_K, 768, 2e-2}, {DType::Q5_K, 768, 2e-2},
    {DType::Q6_K, 768, 2e-2},
};

// a x b in double, each output's tolerance `rel` of the sum of its products' magnitudes.
void reference_mul_mat(const OpGraph& og, const Tensor* a, const Tensor* b, double rel, std::vector<double>& expected,
                       std::vector<double>& tolerance) {
  const std::vector<float> av = og.values_of(a), bv = og.values_of(b);
  const int64_t k = a->ne[0];
  for (int64_t c = 0; c < b->ne[1]; ++c)
    for (int64_t r = 0; r < a->ne[1]; ++r) {
      double dot = 0, magnitude = 0;
      for (int64_t i = 0; i < k; ++i) {
        dot += double(av[r * k + i]) * bv[c * k + i];
        magnitude += std::fabs(double(av[r * k + i]) * bv[c * k + i]);
      }
      expected.push_back(dot);
      tolerance.push_back(rel * magnitude + 1e-6);
    }
}

TEST_P(BackendOps, MulMatEveryWeightTypeAndColumnCount) {
  // 37 rows (no 16-row group) and 80 rows (packed groups, no 32 or 64 multiple); 1 column
  // (decode), 7, 23 (past the 20 that send Q8_0 prefill to AMX tiles where the CPU has them),
  // and 70 (three 32-column tiles, the last partial, where a device runs products tiled).
  for (const WeightType& w : kWeightTypes)
    for (int64_t rows : {37, 80})
      for (int64_t cols : {1, 7, 23, 70}) {
        OpGraph og;
        const int64_t k = w.k;
        Tensor* a = og.leaf(w.type, {k, rows}, random_floats(k * rows, 1 + rows));
        Tensor* b = og.leaf(DType::F32, {k, cols}, acts(k * cols, 2 + cols));
        Tensor* y = og.graph().mul_mat(a, b);
        std::vector<double> expected, tolerance;
        reference_mul_mat(og, a, b, w.tolerance, expected, tolerance);
        check(og, y, expected, tolerance,
              std::string(dtype_name(w.type)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      }
}

TEST_P(BackendOps, MulMatWithMoreRowsThanOneGridDimensionHolds) {
  // 70001 output rows: past the 65535 workgroups one dimension of a GPU grid takes (a large
  // vocabulary's output matrix).
  OpGraph og;
  const int64_t k = 32, rows = 70001;
  Tensor* a = og.leaf(DType::Q8_0, {k, rows}, random_floats(k * rows, 11));
  Tensor* b = og.leaf(DType::F32, {k, 2}, acts(k * 2, 12));
  Tensor* y = og.graph().mul_mat(a, b);
  std::vector<double> expected, tolerance;
  reference_mul_mat(og, a, b, 2e-2, expected, tolerance);
  check(og, y, expected, tolerance, "q8_0 70001x2");
}

TEST_P(BackendOps, AMatrixPastOneStorageBindingIsReadWhole) {
  // 135 MB of f16 weights: past the 128 MiB one Vulkan binding reaches on lavapipe (a 1B
  // model's f16 embedding table), so a device backend reads it a chunk of rows at a time.
  OpGraph og;
  const int64_t k = 2048, rows = 33000;
  Tensor* table = og.leaf(DType::F16, {k, rows}, random_floats(k * rows, 21));
  Tensor* b = og.leaf(DType::F32, {k, 2}, acts(k * 2, 22));
  Tensor* y = og.graph().mul_mat(table, b);
  std::vector<double> expected, tolerance;
  reference_mul_mat(og, table, b, 4e-3, expected, tolerance);
  check(og, y, expected, tolerance, "f16 33000x2");

  OpGraph rows_of;
  const std::vector<float> ids = {0, 32766, 32767, 32999, 5};  // both sides of a chunk's end
  Tensor* t = rows_of.leaf(DType::F16, {k, rows}, random_floats(k * rows, 23));
  Tensor* got = rows_of.graph().get_rows(t, rows_of.leaf(DType::I32, {5}, ids));
  const std::vector<float> tv = rows_of.values_of(t);
  std::vector<double> want;
  for (float id : ids)
    for (int64_t i = 0; i < k; ++i) want.push_back(tv[static_cast<int64_t>(id) * k + i]);
  check(rows_of, got, want, 0.0, "get_rows f16 33000");
}

TEST_P(BackendOps, GetRowsOfEveryTableType) {
  for (const WeightType& w : kWeightTypes) {
    OpGraph og;
    Tensor* table = og.leaf(w.type, {w.k, 11}, random_floats(w.k * 11, 3));
    Tensor* ids = og.leaf(DType::I32, {5}, {10, 0, 3, 3, 7});
    Tensor* y = og.graph().get_rows(table, ids);
    const std::vector<float> tv = og.values_of(table);
    std::vector<double> expected;
    for (int id : {10, 0, 3, 3, 7})
      for (int64_t i = 0; i < w.k; ++i) expected.push_back(tv[id * w.k + i]);
    check(og, y, expected, 1e-6, "get_rows " + std::string(dtype_name(w.type)));
  }
}

// Expert routing as the MoE block builds it: each token's probabilities sorted (ARGSORT), the
// top three's gathered from the token's own row of a 3-d table (GET_ROWS), summed (SUM_ROWS)
// and divided by their sum (DIV).
TEST_P(BackendOps, ExpertRoutingSortsGathersAndNormalizes) {
  const int64_t n_expert = 10, tokens = 5, used = 3;
  const std::vector<float> p = acts(n_expert * tokens, 31);
  std::vector<std::vector<double>> sorted(tokens);
  for (int64_t t = 0; t < tokens; ++t) {
    sorted[t].assign(p.begin() + t * n_expert, p.begin() + (t + 1) * n_expert);
    std::sort(sorted[t].begin(), sorted[t].end(), std::greater<>());
  }
  {
    OpGraph og;
    Graph& g = og.graph();
    Tensor* probs = og.leaf(DType::F32, {n_expert, tokens}, p);
    Tensor* y = g.get_rows(g.reshape_3d(probs, 1, n_expert, tokens), g.argsort_desc(probs));
    std::vector<double> expected;
    for (const auto& row : sorted) expected.insert(expected.end(), row.begin(), row.end());
    check(og, y, expected, 0.0, "argsort and batched get_rows");
  }
  OpGraph og;
  Graph& g = og.graph();
  Tensor* probs = og.leaf(DType::F32, {n_expert, tokens}, p);
  Tensor* order = g.argsort_desc(probs);
  Tensor* top = g.view_2d(order, used, tokens, order->nb[1], 0);
  Tensor* weights = g.reshape_2d(g.cont(g.get_rows(g.reshape_3d(probs, 1, n_expert, tokens), top)), used, tokens);
  Tensor* y = g.div(weights, g.sum_rows(weights));
  std::vector<double> expected;
  for (const auto& row : sorted) {
    const double sum = row[0] + row[1] + row[2];
    for (int64_t i = 0; i < used; ++i) expected.push_back(row[i] / sum);
  }
  check(og, y, expected, 1e-6, "top-3 weights normalized");
}

// Each slot (i, t) multiplies expert ids[i, t]'s matrix by the token's activation (one per token,
// as the gate and up products read) or by its own row (as the down product reads); expert 2
// serves every token, so its columns fill a tile.
TEST_P(BackendOps, MulMatIdEveryWeightType) {
  const int64_t n_expert = 6, rows = 37, tokens = 9, used = 3;
  const std::vector<float> ids = {2, 0, 1, 2, 3, 4, 2, 5, 0, 2, 1, 3, 5, 2, 4, 0, 2, 1, 3, 4, 2, 1, 5, 2, 4, 0, 2};
  for (const WeightType& w : kWeightTypes)
    for (const int64_t b_rows : {int64_t{1}, used}) {
      OpGraph og;
      const int64_t k = w.k;
      Tensor* as = og.leaf(w.type, {k, rows, n_expert}, random_floats(k * rows * n_expert, 41));
      Tensor* b = og.leaf(DType::F32, {k, b_rows, tokens}, acts(k * b_rows * tokens, 42));
      Tensor* y = og.graph().mul_mat_id(as, b, og.leaf(DType::I32, {used, tokens}, ids));
      const std::vector<float> av = og.values_of(as), bv = og.values_of(b);
      std::vector<double> expected, tolerance;
      for (int64_t t = 0; t < tokens; ++t)
        for (int64_t i = 0; i < used; ++i) {
          const int64_t e = static_cast<int64_t>(ids[t * used + i]);
          const float* x = bv.data() + ((b_rows == 1 ? 0 : i) + t * b_rows) * k;
          for (int64_t r = 0; r < rows; ++r) {
            double dot = 0, magnitude = 0;
            for (int64_t j = 0; j < k; ++j) {
              const double product = double(av[(e * rows + r) * k + j]) * x[j];
              dot += product;
              magnitude += std::fabs(product);
            }
            expected.push_back(dot);
            tolerance.push_back(w.tolerance * magnitude + 1e-6);
          }
        }
      check(og, y, expected, tolerance, std::string("mul_mat_id ") + std::string(dtype_name(w.type)) + " b rows " + std::to_string(b_rows));
    }
}

TEST_P(BackendOps, ElementwiseWithBroadcast) {
  const int64_t n0 = 37, n1 = 5, n2 = 3;
  const std::vector<float> x = acts(n0 * n1 * n2, 4), v = acts(n0, 5);
  using Build = std::function<Tensor*(Graph&, Tensor*, Tensor*)>;
  const std::vector<std::tuple<std::string, Build, std::function<double(double, double)>>> ops = {
      {"add", [](Graph& g, Tensor* a, Tensor* b) { return g.add(a, b); }, [](double a, double b) { return a + b; }},
      {"mul", [](Graph& g, Tensor* a, Tensor* b) { return g.mul(a, b); }, [](double a, double b) { return a * b; }},
      {"div", [](Graph& g, Tensor* a, Tensor* b) { return g.div(a, b); }, [](double a, double b) { return a / b; }},
      {"scale", [](Graph& g, Tensor* a, Tensor*) { return g.scale(a, 0.37f); }, [](double a, double) { return a * 0.37f; }},
      {"silu", [](Graph& g, Tensor* a, Tensor*) { return g.silu(a); }, [](double a, double) { return a / (1 + std::exp(-a)); }},
      {"gelu", [](Graph& g, Tensor* a, Tensor*) { return g.gelu(a); },
       [](double a, double) { return 0.5 * a * (1 + std::tanh(std::sqrt(2 / M_PI) * a * (1 + 0.044715 * a * a))); }},
  };
  for (const auto& [name, build, reference] : ops) {
    OpGraph og;
    Tensor* a = og.leaf(DType::F32, {n0, n1, n2}, x);
    Tensor* b = og.leaf(DType::F32, {n0}, v);
    Tensor* y = build(og.graph(), a, b);
    std::vector<double> expected;
    for (int64_t i = 0; i < n0 * n1 * n2; ++i) expected.push_back(reference(x[i], v[i % n0]));
    check(og, y, expected, name == "gelu" ? 2e-3 : 1e-6, name);  // gelu: ggml's f16 table
  }
}

TEST_P(BackendOps, Norms) {
  const int64_t n0 = 45, rows = 7;
  const std::vector<float> x = acts(n0 * rows, 6);
  for (const bool rms : {true, false}) {
    OpGraph og;
    Tensor* a = og.leaf(DType::F32, {n0, rows}, x);
    Tensor* y = rms ? og.graph().rms_norm(a, 1e-5f) : og.graph().norm(a, 1e-5f);
    std::vector<double> expected;
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, square = 0;
      for (int64_t i = 0; i < n0; ++i) mean += x[r * n0 + i] / double(n0);
      for (int64_t i = 0; i < n0; ++i) {
        const double d = x[r * n0 + i] - (rms ? 0.0 : mean);
        square += d * d / double(n0);
      }
      for (int64_t i = 0; i < n0; ++i) expected.push_back((x[r * n0 + i] - (rms ? 0.0 : mean)) / std::sqrt(square + 1e-5));
    }
    check(og, y, expected, 1e-5, rms ? "rms_norm" : "norm");
  }
}

// Both modes; then heads viewed out of wider fused rows (Phi-3's QKV), with frequency factors
// and an attention factor (long-context RoPE).
TEST_P(BackendOps, RopeModesFactorsAndStridedHeads) {
  const int64_t head_dim = 14, heads = 3, tokens = 5, n_rot = 10, row = head_dim * (heads + 2);
  const std::vector<float> pos = {0, 3, 4, 17, 250};
  const std::vector<float> factors = {1.0f, 1.5f, 3.0f, 7.0f, 40.0f};
  const std::vector<float> x = acts(row * tokens, 7);
  struct Case {
    int mode;
    bool fused;  // heads are a view one head into rows of `row`, with factors and attn_factor
  };
  for (const Case c : {Case{kRopeNormal, false}, Case{kRopeNeox, false}, Case{kRopeNeox, true}}) {
    OpGraph og;
    Tensor* rows = og.leaf(DType::F32, {row, tokens}, x);
    Graph& g = og.graph();
    const size_t f32 = sizeof(float);
    Tensor* a = c.fused ? g.view_3d(rows, head_dim, heads, tokens, head_dim * f32, rows->nb[1], head_dim * f32)
                        : g.reshape_3d(g.cont(g.view_2d(rows, head_dim * heads, tokens, rows->nb[1], 0)), head_dim, heads, tokens);
    Tensor* p = og.leaf(DType::I32, {tokens}, pos);
    Tensor* ff = c.fused ? og.leaf(DType::F32, {n_rot / 2}, factors) : nullptr;
    const float attn_factor = c.fused ? 1.19f : 1.0f;
    Tensor* y = g.rope(a, p, ff, RopeParams{static_cast<int32_t>(n_rot), c.mode, 10000.0f, 1.0f, attn_factor});
    std::vector<double> expected;
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t h = 0; h < heads; ++h) {
        const float* in = x.data() + t * row + (h + (c.fused ? 1 : 0)) * head_dim;
        std::vector<double> out(in, in + head_dim);
        for (int64_t i = 0; i < n_rot / 2; ++i) {
          const double theta = pos[t] * std::pow(10000.0, -2.0 * i / n_rot) / (ff ? factors[i] : 1.0);
          const double cos = std::cos(theta) * attn_factor, sin = std::sin(theta) * attn_factor;
          const int64_t j0 = c.mode == kRopeNeox ? i : 2 * i, j1 = c.mode == kRopeNeox ? i + n_rot / 2 : 2 * i + 1;
          out[j0] = in[j0] * cos - in[j1] * sin;
          out[j1] = in[j0] * sin + in[j1] * cos;
        }
        expected.insert(expected.end(), out.begin(), out.end());
      }
    check(og, y, expected, 1e-5, c.fused ? "rope of fused rows" : c.mode == kRopeNeox ? "rope neox" : "rope normal");
  }
}

TEST_P(BackendOps, SoftMaxWithCausalMask) {
  const int64_t keys = 37, queries = 6, heads = 3;
  const std::vector<float> x = acts(keys * queries * heads, 8);
  std::vector<float> mask(keys * 8);  // rows padded past the query count, as the graph builds it
  for (int64_t q = 0; q < 8; ++q)
    for (int64_t k = 0; k < keys; ++k) mask[q * keys + k] = k <= 31 + q ? 0.0f : -INFINITY;
  OpGraph og;
  Tensor* a = og.leaf(DType::F32, {keys, queries, heads}, x);
  Tensor* m = og.leaf(DType::F32, {keys, 8}, mask);
  Tensor* y = og.graph().soft_max(a, m, 0.3f);
  std::vector<double> expected;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t q = 0; q < queries; ++q) {
      std::vector<double> e(keys);
      double top = -INFINITY, sum = 0;
      for (int64_t k = 0; k < keys; ++k) top = std::max(top, e[k] = 0.3 * x[(h * queries + q) * keys + k] + mask[q * keys + k]);
      for (double& v : e) sum += v = std::exp(v - top);
      for (double v : e) expected.push_back(v / sum);
    }
  check(og, y, expected, 1e-6, "soft_max");
}

TEST_P(BackendOps, CopiesOfPermutedViewsIntoEveryStoreType) {
  const int64_t n0 = 13, n1 = 7, n2 = 3;
  const std::vector<float> x = acts(n0 * n1 * n2, 9);
  for (const DType to : {DType::F32, DType::F16}) {
    OpGraph og;
    Graph& g = og.graph();
    Tensor* a = og.leaf(DType::F32, {n0, n1, n2}, x);
    Tensor* permuted = g.permute(a, 1, 0, 2, 3);  // [n1, n0, n2]
    Tensor* store = og.leaf(to, {n1 * n0 * n2 + 5}, std::vector<float>(n1 * n0 * n2 + 5, 0.0f));
    Tensor* dst = g.view_1d(store, n1 * n0 * n2, 0);
    Tensor* y = g.cpy(g.cont(permuted), dst);
    std::vector<double> expected;
    for (int64_t k = 0; k < n2; ++k)
      for (int64_t i = 0; i < n0; ++i)
        for (int64_t j = 0; j < n1; ++j) expected.push_back(x[(k * n1 + j) * n0 + i]);
    check(og, y, expected, to == DType::F16 ? 1e-3 : 0.0, "cont + cpy to " + std::string(dtype_name(to)));
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKnownBackend, BackendOps, ::testing::ValuesIn(known_backends()), test_backends::param_name);

}  // namespace
