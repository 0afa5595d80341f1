// The built-in model's bytes, placed in the binary by the assembler (ENGINE_DEFAULT_MODEL is
// its path, set by engine/CMakeLists.txt), so installed tools and linking programs need no file.
#include "engine/embedded.h"

asm(R"(
  .pushsection .rodata
  .balign 64
engine_default_model_begin:
  .incbin ")" ENGINE_DEFAULT_MODEL R"("
engine_default_model_end:
  .popsection
)");

extern "C" const char engine_default_model_begin[];
extern "C" const char engine_default_model_end[];

namespace engine {

EmbeddedFile embedded_default_model() {
  return {"stories260K.gguf", {engine_default_model_begin, engine_default_model_end}};
}

}  // namespace engine
