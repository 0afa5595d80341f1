// engine-run --chat: a conversation (engine::Conversation) in the model's chat template, or
// the one --chat-template names; replies stream to stdout, one line each.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include "engine/chat.h"
#include "run_options.h"

namespace {

// The next user turn: -p once, else a line of stdin ("> " on a terminal); nullopt at the end.
std::optional<std::string> next_turn(const RunOptions& opt, bool& prompt_used) {
  if (opt.prompt_given) {
    if (prompt_used) return std::nullopt;
    prompt_used = true;
    return opt.prompt;
  }
  if (isatty(STDIN_FILENO)) std::fputs("> ", stderr);
  std::string line;
  if (!std::getline(std::cin, line) || line.empty()) return std::nullopt;
  return line;
}

}  // namespace

int run_chat(const RunOptions& opt) {
  auto session = open_warm_session(opt);
  const engine::ChatTemplate tmpl =
      opt.chat_template.empty() ? engine::chat_template_of(session->model().file()) : engine::chat_template_named(opt.chat_template);
  engine::Conversation chat(*session, tmpl, opt.system);
  engine::Sampler sampler(opt.sampler);
  double first_ttft_ms = -1;
  bool prompt_used = false;
  while (const auto user = next_turn(opt, prompt_used)) {
    const auto t0 = Clock::now();
    const Reply r = stream_reply(*session, sampler, chat.user(*user), opt.n_predict, t0);
    std::fputs("\n", stdout);
    std::fflush(stdout);
    if (first_ttft_ms < 0) first_ttft_ms = r.ttft_ms;
    chat.assistant(r.text);
    if (r.context_full) {
      std::fprintf(stderr, "engine-run: the context of %lld positions is full; use a larger -c for a longer chat\n",
                   static_cast<long long>(session->n_ctx()));
      break;
    }
  }
  print_run_stats(*session, std::max(0.0, first_ttft_ms));
  if (opt.session.profile) write_profile(*session, opt);
  return 0;
}
