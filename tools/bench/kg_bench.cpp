#include "tools/bench/kg_bench.hpp"

#include "actors/ingest/embedded_broker.hpp"
#include "net/http.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/pipeline_bench.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>

namespace engram::bench {

namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;

constexpr std::size_t families = 50;

/// A bundle of `n` entities: `families` families (with a derived part_count) and parts that
/// refer to them, filterable by family, status and size.
void write_bundle(const std::filesystem::path& dir, std::size_t n) {
  std::filesystem::create_directories(dir / "schemas");
  std::filesystem::create_directories(dir / "entities");
  std::ofstream(dir / "manifest.yaml") << "name: bench-catalog\nversion: 1.0.0\n"
                                          "schemas: [schemas/family.schema.json, schemas/part.schema.json]\n"
                                          "entities: [{type: family, file: entities/families.json}, "
                                          "{type: part, file: entities/parts.json}]\n";
  std::ofstream(dir / "schemas/family.schema.json") << json{
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"type", "object"},
      {"x-id-field", "code"},
      {"required", {"code", "name"}},
      {"properties",
       {{"code", {{"type", "string"}}},
        {"name", {{"type", "string"}, {"minLength", 1}}},
        {"part_count",
         {{"type", "integer"}, {"x-derived", true}}}}}}.dump(2);
  std::ofstream(dir / "schemas/part.schema.json") << json{
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"type", "object"},
      {"x-id-field", "code"},
      {"x-tool-expose", {"list", "get", "list_ids"}},
      {"required", {"code", "family", "status"}},
      {"additionalProperties", false},
      {"properties",
       {{"code", {{"type", "string"}, {"pattern", "^p-[0-9]{6}$"}}},
        {"family", {{"type", "string"}, {"x-ref", "family"}, {"x-index", true}}},
        {"status", {{"type", "string"}, {"enum", {"active", "retired"}}, {"x-index", true}}},
        {"size", {{"type", "string"}, {"enum", {"s", "m", "l"}}, {"x-index", true}}},
        {"weight_g", {{"type", "number"}, {"minimum", 0}}},
        {"description",
         {{"type", "string"}, {"maxLength", 400}}}}}}.dump(2);
  json fams = json::array(), parts = json::array();
  auto fam = [](std::size_t i) {
    char b[16];
    std::snprintf(b, sizeof b, "f-%02zu", i);
    return std::string(b);
  };
  for (std::size_t i = 0; i < families; ++i)
    fams.push_back({{"code", fam(i)}, {"name", "Family " + std::to_string(i)}});
  for (std::size_t i = 0; i + families < n; ++i) {
    char code[16];
    std::snprintf(code, sizeof code, "p-%06zu", i);
    parts.push_back({{"code", code},
                     {"family", fam(i % families)},
                     {"status", i % 5 == 0 ? "retired" : "active"},
                     {"size", i % 3 == 0   ? "s"
                              : i % 3 == 1 ? "m"
                                           : "l"},
                     {"weight_g", double(i % 977) + 0.5},
                     {"description", "Part " + std::to_string(i) +
                                         " of the bench catalog, a generated entity of "
                                         "realistic size with a sentence or two of text about it."}});
  }
  std::ofstream(dir / "entities/families.json") << fams.dump();
  std::ofstream(dir / "entities/parts.json") << parts.dump();
}

/// One tools/call over HTTP; its wall time in ms. Throws on a tool error.
double timed_call(std::uint16_t port, const std::string& token, const std::string& tool, const json& args) {
  const auto body =
      json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}}
          .dump();
  const auto t0 = clock_type::now();
  auto r = net::fetch("POST", "http://127.0.0.1:" + std::to_string(port) + "/mcp", body,
                      {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}});
  const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  if (r.status != 200 || r.body.find("\"isError\":true") != std::string::npos)
    throw std::runtime_error(tool + " failed: " + r.body.substr(0, 400));
  return ms;
}

}  // namespace

int kg(const kg_bench_options& o) {
  const auto dir = std::filesystem::temp_directory_path() / ("engram-bench-kg-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  write_bundle(dir / "bundle", o.entities);
  auto broker = test_broker(4);
  const std::string token = "bench-kg-token-0123456789abcdef";
  const auto tokens =
      "[{token: " + token + ", organization_id: bench, scopes: [read], name: bench, bundles: [bench-catalog]}]";
  double apply_s = 0;
  std::string apply_out;
  std::vector<double> list_ms, list2_ms, get_ms;
  {
    engramd_child engramd(broker->bootstrap(), (dir / "store").string(), o.model_path, {"auth.tokens=" + tokens});
    const auto port = engramd.port();
    std::ofstream(dir / "engram.yaml") << "kafka: {brokers: \"" << broker->bootstrap()
                                       << "\"}\nhttp: {listen: \"127.0.0.1:" << port << "\"}\nauth: {tokens: " << tokens
                                       << "}\n";
    const auto ctl = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "engramctl";
    const auto cmd = ctl.string() + " kg apply " + (dir / "bundle").string() + " --organization bench --config " +
                     (dir / "engram.yaml").string() + " 2>&1";
    std::fprintf(stderr, "engram_bench kg: applying a bundle of %zu entities\n", o.entities);
    const auto t0 = clock_type::now();
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    while (p && std::fgets(buf, sizeof buf, p))
      apply_out += buf;
    if (!p || ::pclose(p) != 0)
      throw std::runtime_error("kg apply failed: " + apply_out);
    apply_s = std::chrono::duration<double>(clock_type::now() - t0).count();
    for (std::size_t i = 0; i < o.queries; ++i) {
      char fam[16], code[16];
      std::snprintf(fam, sizeof fam, "f-%02zu", (i * 7) % families);
      std::snprintf(code, sizeof code, "p-%06zu", (i * 7919) % (o.entities - families));
      list_ms.push_back(timed_call(port, token, "list_part", {{"filters", {{"family", fam}}}, {"limit", 50}}));
      list2_ms.push_back(
          timed_call(port, token, "list_part", {{"filters", {{"family", fam}, {"status", "retired"}}}, {"limit", 50}}));
      get_ms.push_back(timed_call(port, token, "get_part", {{"id", code}}));
    }
  }
  std::filesystem::remove_all(dir);
  const auto visible = apply_out.find("visible after ");
  std::printf(
      "\nKnowledge bundles: a generated bundle of %zu entities (%zu families with a derived part_count, %zu "
      "parts filterable by family, status and size) applied with engramctl kg apply to engramd (a child "
      "process, an in-process Kafka-protocol broker), then %zu calls per figure over MCP/HTTP, %u cores:\n\n",
      o.entities, families, o.entities - families, o.queries, std::thread::hardware_concurrency());
  std::printf("| figure | p50 | p99 | unit | notes |\n|---|---|---|---|---|\n");
  std::printf(
      "| kg apply, %zu entities (engramctl: load, validate, derive, write; engramd: apply) | %.2f | — | s | %s |\n",
      o.entities, apply_s,
      visible == std::string::npos
          ? ""
          : ("visible " + apply_out.substr(visible + 14, apply_out.find('\n', visible) - visible - 14) +
             " after the first record was written")
                .c_str());
  std::printf("| list_part, one filter (family: ~%zu matches), limit 50 | %.2f | %.2f | ms | items and total |\n",
              (o.entities - families) / families, percentile(list_ms, 0.5), percentile(list_ms, 0.99));
  std::printf("| list_part, two filters (family and status) | %.2f | %.2f | ms | |\n", percentile(list2_ms, 0.5),
              percentile(list2_ms, 0.99));
  std::printf("| get_part by id | %.2f | %.2f | ms | |\n", percentile(get_ms, 0.5), percentile(get_ms, 0.99));
  return 0;
}

}  // namespace engram::bench
