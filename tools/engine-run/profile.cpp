// --profile and --trace-out: the session's per-op records joined with the cost model.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cost/chrome_trace.h"
#include "cost/hardware.h"
#include "cost/html_report.h"
#include "cost/profile.h"
#include "engine/error.h"
#include "run_options.h"

namespace {

void write_views(std::ostream& out, const cost::Profile& profile, const std::string& format) {
  if (format == "json") out << cost::profile_json(profile).dump(1) << "\n";
  else if (format == "csv") cost::write_profile_csv(out, profile);
  else cost::write_profile_text(out, profile);
}

std::ofstream open_output(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw engine::Error("cannot open '" + path + "' for writing");
  return out;
}

}  // namespace

void write_profile(const engine::Session& session, const RunOptions& opt) {
  const std::string hardware = opt.hardware.empty() ? cost::hardware_name_for(session.backend().device()) : opt.hardware;
  const cost::ProfiledRun run = cost::join_profile(session, model_label(opt), hardware);
  if (!opt.trace_out.empty()) {
    std::ofstream out = open_output(opt.trace_out);
    out << cost::chrome_trace(run).dump() << "\n";
    if (!out) throw engine::Error("failed writing the trace to '" + opt.trace_out + "'");
  }
  if (!opt.profile && opt.report.empty()) return;
  const cost::Profile profile = cost::make_profile(run);
  if (!opt.report.empty()) {
    std::ofstream out = open_output(opt.report);
    const nlohmann::json document = cost::profile_json(profile);
    cost::write_html_report(out, &document, nullptr);
    if (!out) throw engine::Error("failed writing the report to '" + opt.report + "'");
  }
  if (!opt.profile) return;
  if (opt.profile_out.empty()) {
    std::cout << "\n";
    write_views(std::cout, profile, opt.profile_format);
    std::cout.flush();
    return;
  }
  std::ofstream out = open_output(opt.profile_out);
  write_views(out, profile, opt.profile_format);
  if (!out) throw engine::Error("failed writing the profile to '" + opt.profile_out + "'");
}
