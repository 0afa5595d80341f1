// engine-gguf: small helpers around GGUF files.
#include <fmt/core.h>

#include <exception>

#include "commands.h"
#include "tool_cli.h"

int main(int argc, char** argv) {
  CLI::App app{"engine-gguf: inspect and synthesize GGUF files"};
  tool_cli::show_defaults(app);
  app.require_subcommand(1);
  add_inspect_command(app);
  add_synth_command(app);
  try {  // the subcommands run from their callbacks, inside parse
    if (const auto exit_code = tool_cli::parse(app, argc, argv, "engine-gguf")) return *exit_code;
  } catch (const std::exception& e) {
    fmt::print(stderr, "engine-gguf: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
