// The HTML report writer: what each document yields, tolerance of partial or ill-typed
// documents, escaping, and the chart scales. The browser check is tests/e2e/html_report_test.py.
#include "cost/html_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "svg_chart.h"

namespace {

using nlohmann::json;

std::string render(const json* profile, const json* bench) {
  std::ostringstream out;
  cost::write_html_report(out, profile, bench);
  return out.str();
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The roofline chart's <figure>, to count its points.
std::string figure(const std::string& page, const std::string& id) {
  const size_t start = page.find("<figure class=\"chart\" id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  return page.substr(start, page.find("</figure>", start) - start);
}

json small_profile() {
  const json node_a = {{"name", "ffn_up-0"}, {"op", "MUL_MAT"}, {"layer", 0}, {"flops", 2e6}, {"bytes", 1e6},
                       {"ms", 0.5}, {"intensity", 2.0}, {"achieved_gflops_s", 4.0}};
  const json node_b = {{"name", "l_out-0"}, {"op", "ADD"}, {"layer", 0}, {"flops", 1e3}, {"bytes", 1.2e4},
                       {"ms", 0.01}, {"intensity", 0.083}, {"achieved_gflops_s", 0.1}};
  const json view = {{"name", "k_view-0"}, {"op", "VIEW"}, {"layer", 0}, {"flops", 0}, {"bytes", 0},
                     {"ms", 0}, {"intensity", 0}, {"achieved_gflops_s", 0}};
  json phase = {
      {"steps", 4}, {"tokens", 4}, {"wall_ms", 0.53}, {"op_ms_sum", 0.51}, {"flops", 2.001e6}, {"bytes", 1.012e6},
      {"tflops", 0.004},
      {"ops", {{{"label", "matmul:ffn_up:L0"}, {"op", "MUL_MAT"}, {"layer", 0}, {"ms", 0.5}, {"pct", 98.0}, {"calls", 4}},
               {{"label", "add:l_out:L0"}, {"op", "ADD"}, {"layer", 0}, {"ms", 0.01}, {"pct", 2.0}, {"calls", 4}}}},
      {"modules", {{{"path", "model"}, {"name", "model"}, {"art", ""}, {"self_ms", nullptr}, {"total_ms", 0.51}, {"calls", 4}}}},
      {"layers", {{{"layer", 0}, {"ms", 0.51}, {"flops", 2.001e6}, {"bytes", 1.012e6}, {"gflops_s", 3.9}, {"gb_s", 1.98},
                   {"roofline_pct", 10.5}, {"predicted_ms", 0.05}, {"ratio", 10.2}}}},
      {"op_types", {{{"op", "MUL_MAT"}, {"count", 4}, {"total_ms", 0.5}, {"mean_ms", 0.125}, {"predicted_ms", 0.05}, {"ratio", 10}},
                    {{"op", "ADD"}, {"count", 4}, {"total_ms", 0.01}, {"mean_ms", 0.0025}, {"predicted_ms", 0.001}, {"ratio", 10}}}},
      {"slowest", {{{"name", "ffn_up-0"}, {"op", "MUL_MAT"}, {"layer", 0}, {"ms", 0.13}}}},
      {"nodes", {node_a, node_b, view}}};
  return {{"model", {{"source", "tiny.gguf"}, {"arch", "llama"}, {"n_layer", 1}, {"weight_type", "q8_0"}, {"params", 1000},
                     {"size_bytes", 1100}}},
          {"backend", "cpu"},
          {"threads", 2},
          {"hardware", {{"name", "test-hw"}, {"mem_bw_gbs", 10.0},
                        {"peak_tflops", {{"f32", 0.1}, {"f16", 0.2}, {"bf16", 0.2}, {"int8", 0.4}}}}},
          {"phases", {{"decode", phase}}},
          {"memory", {{"weights", 1100}, {"kv_cache", 2048}, {"compute_buffer", 4096}, {"peak_rss", 1 << 20}}}};
}

TEST(HtmlReport, NoDocumentsStillGiveACompletePageWithItsSelfTest) {
  const std::string page = render(nullptr, nullptr);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<pre id=\"selftest\">"), std::string::npos);
  EXPECT_NE(page.find("Content-Security-Policy"), std::string::npos);
  EXPECT_EQ(count(page, "<figure"), 0u);
  EXPECT_EQ(page.substr(page.size() - 8), "</html>\n");
}

TEST(HtmlReport, AProfilePhaseGivesItsThreeChartsAndSixTables) {
  const json profile = small_profile();
  const std::string page = render(&profile, nullptr);
  EXPECT_EQ(count(page, "<figure class=\"chart\""), 3u);
  for (const char* id : {"decode-layers", "decode-roofline", "decode-optypes"}) EXPECT_FALSE(figure(page, id).empty()) << id;
  EXPECT_EQ(count(page, "<table>"), 6u);
  EXPECT_EQ(page.find("id=\"prefill\""), std::string::npos);  // absent phase, absent section
  // Two nodes with arithmetic become points; the view has none. Ceilings: f32, f16/bf16 (merged), int8.
  const std::string roofline = figure(page, "decode-roofline");
  EXPECT_EQ(count(roofline, "<circle class=\"mark\""), 2u);
  EXPECT_NE(roofline.find("f16/bf16 peak 200 GFLOP/s"), std::string::npos);
  EXPECT_NE(roofline.find("2 of 3 nodes placed"), std::string::npos);
  EXPECT_NE(page.find("<td>TOTAL</td>"), std::string::npos);
}

TEST(HtmlReport, IllTypedAndMissingFieldsLeaveBlanksNotExceptions) {
  json decode;
  decode["ops"] = "x";
  decode["nodes"] = json::array({json{{"intensity", "a"}}, 3});
  decode["layers"] = json::array({1, 2});
  decode["op_types"] = json::array({json{{"op", 7}, {"total_ms", "slow"}}});
  json profile;
  profile["model"] = "not an object";
  profile["hardware"] = 5;
  profile["phases"]["decode"] = decode;
  profile["memory"]["weights"] = "many";
  std::string page;
  EXPECT_NO_THROW(page = render(&profile, nullptr));
  EXPECT_EQ(count(page, "<figure class=\"chart\""), 3u);
  EXPECT_NE(page.find("—"), std::string::npos);
  json bench;
  bench["sweeps"]["pp"] = json::array({json{{"tokens", "many"}}, 1});
  bench["sweeps"]["tg"] = "none";
  bench["tests"] = 3;
  EXPECT_NO_THROW(page = render(nullptr, &bench));
}

TEST(HtmlReport, DocumentTextIsEscaped) {
  json profile = small_profile();
  profile["model"]["source"] = "<script>alert(1)</script>";
  profile["phases"]["decode"]["ops"][0]["label"] = "a&b\"c";
  const std::string page = render(&profile, nullptr);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("a&amp;b&quot;c"), std::string::npos);
}

TEST(HtmlReport, BenchSweepsGiveThroughputAndMemoryChartsPerSweep) {
  json pp = json::array();
  for (int tokens : {64, 128, 256})
    pp.push_back({{"model", "m"}, {"tokens", tokens}, {"t_s", 1000.0 / tokens}, {"sd", 0.5}, {"peak_rss", 1 << 22},
                  {"weights", 1000}, {"kv_cache", tokens * 16}, {"compute_buffer", tokens * 64},
                  {"session_bytes", 1000 + tokens * 80}});
  const json bench = {{"sweeps", {{"pp", pp}, {"tg", json::array()}}}};
  const std::string page = render(nullptr, &bench);
  EXPECT_FALSE(figure(page, "sweep-pp-throughput").empty());
  EXPECT_FALSE(figure(page, "sweep-pp-memory").empty());
  EXPECT_TRUE(figure(page, "sweep-tg-throughput").empty());
  // Ticks at the measured lengths; three points, each with an error bar, and the line.
  const std::string tput = figure(page, "sweep-pp-throughput");
  for (const char* tick : {">64<", ">128<", ">256<"}) EXPECT_NE(tput.find(tick), std::string::npos) << tick;
  EXPECT_EQ(count(tput, "<circle class=\"mark\""), 3u);
  EXPECT_EQ(count(tput, "<polyline class=\"mark\""), 4u);
}

// Predictions name the hardware profile they came from, and a calibrated one's date.
TEST(HtmlReport, PredictionsNameTheirProfileAndItsCalibrationDate) {
  json profile = small_profile();
  EXPECT_EQ(render(&profile, nullptr).find("calibrated"), std::string::npos);
  profile["hardware"]["calibrated"] = "2026-11-25 09:00 UTC";
  EXPECT_NE(render(&profile, nullptr).find("hardware test-hw, calibrated 2026-11-25 09:00 UTC (10.0 GB/s)"),
            std::string::npos);
  const json bench = {{"tests",
                       {{{"model_desc", "m"}, {"test", "tg128"}, {"avg_ts", 50.0}, {"stddev_ts", 1.0},
                         {"predicted_ts", 47.25}, {"hardware", "cpu-local-calibrated"},
                         {"hardware_calibrated", "2026-11-25 09:01 UTC"}}}}};
  const std::string page = render(nullptr, &bench);
  EXPECT_NE(page.find("<td class=\"r\">47.25</td>"), std::string::npos);
  EXPECT_NE(page.find("cpu-local-calibrated, calibrated 2026-11-25 09:01 UTC"), std::string::npos);
}

TEST(HtmlReportScale, LogAxisSpansWholeDecadesWithATickEach) {
  cost::svg::Scale s = cost::svg::Scale::log(0.5, 300, "x");
  s.set_pixels(0, 400);
  EXPECT_DOUBLE_EQ(s.lo(), 0.1);
  EXPECT_DOUBLE_EQ(s.hi(), 1000);
  EXPECT_DOUBLE_EQ(s(1), 100);
  std::string texts;
  for (const auto& t : s.ticks()) texts += t.text + " ";
  EXPECT_EQ(texts, "0.1 1 10 100 1k ");
}

TEST(HtmlReportScale, LinearAxisRoundsToStepsOfOneTwoOrFive) {
  cost::svg::Scale s = cost::svg::Scale::linear(0, 7.3, "y");
  s.set_pixels(300, 0);
  EXPECT_DOUBLE_EQ(s.hi(), 8);
  EXPECT_DOUBLE_EQ(s(8), 0);
  std::string texts;
  for (const auto& t : s.ticks()) texts += t.text + " ";
  EXPECT_EQ(texts, "0 2 4 6 8 ");
}

}  // namespace
