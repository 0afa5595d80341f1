#pragma once
// The engine-gguf subcommands; each registers itself on the app and runs from its callback.
#include <CLI/CLI.hpp>

void add_inspect_command(CLI::App& app);
void add_synth_command(CLI::App& app);
