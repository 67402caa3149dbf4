#include "kg/bowtie.hpp"

#include "kg/json_schema.hpp"

#include <string>

namespace engram::kg {

namespace {

constexpr const char* dialect_2020_12 = "https://json-schema.org/draft/2020-12/schema";

json implementation() {
  return {{"name", "engram-kg"},
          {"language", "c++"},
          {"dialects", {dialect_2020_12}},
          // Engram has no public address; URNs keep the fields valid URIs without inventing one.
          {"homepage", "urn:x-engram:kg"},
          {"issues", "urn:x-engram:kg:issues"},
          {"source", "urn:x-engram:kg:source"}};
}

json run_case(const json& cmd) {
  const auto seq = cmd.value("seq", json(nullptr));
  const auto& c = cmd.at("case");
  if (c.contains("registry") && !c["registry"].empty())
    return {
        {"seq", seq}, {"skipped", true}, {"message", "schemas from a registry (remote references) are not supported"}};
  auto schema = json_schema::compile(c.at("schema"));
  if (!schema)
    return {{"seq", seq}, {"skipped", true}, {"message", schema.error()}};
  json results = json::array();
  for (const auto& t : c.at("tests"))
    results.push_back({{"valid", schema->valid(t.at("instance"))}});
  return {{"seq", seq}, {"results", results}};
}

}  // namespace

int bowtie_harness(std::istream& in, std::ostream& out) {
  bool started = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto cmd = json::parse(line, nullptr, false);
    if (cmd.is_discarded() || !cmd.is_object() || !cmd.contains("cmd") || !cmd["cmd"].is_string()) {
      out << json{{"error", "not a harness command: " + line.substr(0, 200)}}.dump() << std::endl;
      return 1;
    }
    const auto name = cmd["cmd"].get<std::string>();
    if (name == "start") {
      if (cmd.value("version", json()) != 1) {  // compared as JSON: any type is just not 1
        out << json{{"error", "protocol version 1 only"}}.dump() << std::endl;
        return 1;
      }
      started = true;
      out << json{{"version", 1}, {"implementation", implementation()}}.dump() << std::endl;
    } else if (!started) {
      out << json{{"error", "'start' must come first"}}.dump() << std::endl;
      return 1;
    } else if (name == "dialect") {
      out << json{{"ok", cmd.value("dialect", json()) == dialect_2020_12}}.dump() << std::endl;
    } else if (name == "run") {
      json reply;
      try {
        reply = run_case(cmd);
      } catch (const json::exception& e) {
        reply = {{"seq", cmd.value("seq", json(nullptr))}, {"errored", true}, {"context", {{"message", e.what()}}}};
      }
      out << reply.dump() << std::endl;
    } else if (name == "stop") {
      out << json::object().dump() << std::endl;
      return 0;
    } else {
      out << json{{"error", "unknown command '" + name + "'"}}.dump() << std::endl;
      return 1;
    }
  }
  return 0;
}

}  // namespace engram::kg
