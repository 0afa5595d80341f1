// The session engine-run works on: the model of -m, or the built-in one.
#include "run_options.h"

std::unique_ptr<engine::Session> open_session(const RunOptions& opt, const engine::SessionParams& params) {
  if (!opt.model.empty()) return engine::Session::create(opt.model, params);
  return engine::Session::create(engine::Model::load_builtin(), params);
}

std::unique_ptr<engine::Session> open_warm_session(const RunOptions& opt) {
  auto session = open_session(opt, opt.session);
  if (opt.warm_up) session->warm_up();
  return session;
}

std::string model_label(const RunOptions& opt) {
  return opt.model.empty() ? "stories260K.gguf (built in)" : opt.model;
}
