// engine-gguf: small helpers around GGUF files.
#include <CLI/CLI.hpp>
#include <exception>

#include <fmt/core.h>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"engine-gguf: inspect and synthesize GGUF files"};
  app.require_subcommand(1);
  add_inspect_command(app);
  add_synth_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "engine-gguf: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
