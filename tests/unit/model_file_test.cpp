// A model file that changes on disk after the model was loaded. The loaded model keeps its header
// (copied out) and its open descriptor: a file removed or replaced by a new one (rename) still gives
// sessions the weights it had; a file cut short makes the next session's weight load fail with an
// Error naming the file, not a crash (weights are read with pread, never through the mapping).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/session.h"
#include "test_models.h"

using namespace engine;
namespace fs = std::filesystem;

namespace {

// A copy of a small synthetic model this test may change.
std::string own_copy(const std::string& name) {
  const std::string path = test_models::process_model_path(name);
  fs::copy_file(test_models::synthetic_model(DType::Q8_0), path, fs::copy_options::overwrite_existing);
  return path;
}

std::vector<float> first_logits(const std::shared_ptr<const Model>& model) {
  SessionParams params;
  params.n_ctx = 16;
  params.n_threads = 1;
  const auto session = Session::create(model, params);  // the logits are its memory: it outlives their copy
  const auto logits = session->prefill(std::vector<int32_t>{1, 300, 17});
  return {logits.begin(), logits.end()};
}

}  // namespace

TEST(ModelFile, RemovedOrReplacedAfterLoadingStillServesItsWeights) {
  const std::string path = own_copy("removed");
  const std::shared_ptr<const Model> model = Model::load(path);
  const std::vector<float> before = first_logits(model);
  fs::remove(path);
  EXPECT_EQ(first_logits(model), before);
  write_synthetic_model(SynthSpec{.seed = 7}, path + ".new");  // other weights, renamed over the old name
  fs::rename(path + ".new", path);
  EXPECT_EQ(first_logits(model), before);
  fs::remove(path);
}

TEST(ModelFile, CutShortAfterLoadingFailsTheNextSessionWithAnError) {
  const std::string path = own_copy("truncated");
  const std::shared_ptr<const Model> model = Model::load(path);
  fs::resize_file(path, model->file().data_offset() + 100);
  try {
    first_logits(model);
    FAIL() << "a session loaded weights from a file cut short";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("the file ended early"), std::string::npos) << what;
  }
  fs::remove(path);
}
