#pragma once
// Tests run once per backend name: a fixture that skips a backend this build or machine cannot
// make (not built in, or no device), and the test-name suffix for INSTANTIATE_TEST_SUITE_P.
#include <gtest/gtest.h>

#include <string>

#include "engine/backend.h"
#include "engine/error.h"

namespace engine::test_backends {

class EachBackend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    try {
      make_backend(GetParam(), BackendParams{0, 1});
    } catch (const Error& e) {
      GTEST_SKIP() << e.what();
    }
  }
};

inline std::string param_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

}  // namespace engine::test_backends
