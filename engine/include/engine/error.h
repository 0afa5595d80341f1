#pragma once
// The library reports failures by throwing engine::Error; its message names the file,
// tensor, key or value that caused it. Every public function may throw it unless noted.
#include <stdexcept>
#include <string>

namespace engine {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace engine
