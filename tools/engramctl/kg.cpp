#include "tools/engramctl/kg.hpp"

#include "actors/ingest/producer.hpp"
#include "config/config.hpp"
#include "kg/bundle.hpp"
#include "net/http.hpp"
#include "schemas/log_record.hpp"
#include "schemas/time.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace engram::ctl {

namespace {

using json = nlohmann::json;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// What talking to engramd needs: its config, base URL and a token of the organisation.
struct target {
  config::engram_config cfg;
  std::string url, token;
};

std::optional<target> connect(const kg_options& o, const char* who, std::ostream& err) {
  auto loaded = config::load(o.config_path, o.overrides, environ);
  if (!loaded) {
    err << who << ": " << loaded.error() << "\n";
    return std::nullopt;
  }
  target t{*loaded, o.url, o.token};
  if (t.url.empty()) {
    auto listen = t.cfg.http.listen;
    if (listen.starts_with("0.0.0.0:"))
      listen = "127.0.0.1:" + listen.substr(8);
    t.url = "http://" + listen;
  }
  if (t.token.empty()) {
    for (const auto& tok : t.cfg.auth.tokens)
      if (tok.organization_id == o.organization &&
          (t.token.empty() || std::count(tok.scopes.begin(), tok.scopes.end(), "admin")))
        t.token = tok.token;
    if (t.token.empty() && t.cfg.auth.tokens.empty() && t.cfg.auth.dev_organization == o.organization) {
      std::ifstream in(t.cfg.storage.path + "/dev-token");
      in >> t.token;  // engramd's dev token, when it made one
    }
    if (t.token.empty() && t.cfg.auth.anonymous_organization != o.organization) {
      err << who << ": no token of organisation '" << o.organization
          << "' in auth.tokens of the config: give one with --token\n";
      return std::nullopt;
    }
  }
  return t;
}

/// GET /v1/kg/bundles[?name=]: the answer, or nullopt (reported).
std::optional<json> bundles(const target& t, const std::string& name, const char* who, std::ostream& err) {
  std::map<std::string, std::string> headers;
  if (!t.token.empty())
    headers["Authorization"] = "Bearer " + t.token;
  auto res = net::fetch("GET", t.url + "/v1/kg/bundles" + (name.empty() ? "" : "?name=" + name), {}, headers);
  if (res.status != 200) {
    err << who << ": engramd at " << t.url << ": "
        << (res.status == 0 ? res.error : "HTTP " + std::to_string(res.status) + " " + res.body) << "\n";
    return std::nullopt;
  }
  auto j = json::parse(res.body, nullptr, false);
  if (!j.is_object() || !j.contains("bundles")) {
    err << who << ": engramd answered something else than its bundles: " << res.body << "\n";
    return std::nullopt;
  }
  return j;
}

/// Appends records to engram-log (key = organisation, kind header); false (reported) on failure.
bool append(const target& t, const std::vector<schemas::log_payload>& records, const char* who, std::ostream& err) {
  if (t.cfg.kafka.embedded()) {
    err << who << ": kafka.brokers is 'embedded' (engramd's in-process broker): give the brokers engramd uses, e.g. "
        << "--set kafka.brokers=host:9092\n";
    return false;
  }
  auto made = ingest::kafka_producer::create(t.cfg.kafka.brokers, t.cfg.kafka.rdkafka);
  if (!made) {
    err << who << ": " << made.error() << "\n";
    return false;
  }
  auto& producer = *made;
  for (const auto& r : records) {
    auto rec = schemas::encode(r);
    if (!producer->produce(t.cfg.kafka.topics.log, rec.key, rec.value, {{schemas::kind_header, rec.kind}})) {
      err << who << ": " << producer->last_error() << "\n";
      return false;
    }
  }
  if (!producer->flush(std::chrono::seconds(60))) {
    err << who << ": engram-log did not acknowledge every record: " << producer->last_error() << "\n";
    return false;
  }
  return true;
}

/// Polls the bundle's last apply until `done(status)` or the timeout (engramd may restart in
/// between: the record is on the log and will be applied); the status, or null.
json wait_for(const target& t, const kg_options& o, const std::string& name,
              const std::function<bool(const json&)>& done, const char* who, std::ostream& err) {
  const auto until = std::chrono::steady_clock::now() + o.timeout;
  std::ostringstream last_problem;
  while (std::chrono::steady_clock::now() < until) {
    last_problem.str("");
    if (auto j = bundles(t, name, who, last_problem))
      for (const auto& b : (*j)["bundles"])
        if (b.contains("lastApply") && done(b["lastApply"]))
          return b["lastApply"];
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  err << last_problem.str() << who << ": written to engram-log but not applied within " << o.timeout.count()
      << " s (engramd behind, or not running); it will be applied: check with engramctl kg show " << name << "\n";
  return nullptr;
}

template <class Command>
void stamp(Command& c, const std::string& org) {
  c.organization_id = org;
  c.issued_at_ms = now_ms();
  c.issued_at = schemas::format_rfc3339(c.issued_at_ms);
  c.issued_by = "engramctl";
}

}  // namespace

int kg_validate(const std::string& dir, std::ostream& out, std::ostream& err) {
  auto loaded = kg::load_bundle(dir);
  if (auto* errors = std::get_if<std::vector<kg::bundle_error>>(&loaded)) {
    for (const auto& e : *errors)
      err << e.to_string() << "\n";
    err << "kg validate: " << errors->size() << " problem" << (errors->size() == 1 ? "" : "s") << " in " << dir << "\n";
    return 1;
  }
  const auto& b = std::get<kg::bundle>(loaded);
  for (const auto& w : b.warnings)
    err << "warning: " << w << "\n";
  std::size_t entities = 0;
  for (const auto& [name, t] : b.types)
    entities += t.entities.size();
  out << "bundle " << b.name << " " << b.version << ": " << b.types.size() << " types, " << entities
      << " entities, valid\n";
  for (const auto& [name, t] : b.types) {
    std::string tools;
    for (const auto& x : t.expose)
      tools += " " + (x == "list_ids" ? "list_" + name + "_ids" : x + "_" + name);
    out << "  " << name << ": " << t.entities.size() << " entities, id " << t.id_field << ", tools" << tools << "\n";
  }
  return 0;
}

namespace {

/// The bundle's types as the records carry them.
std::vector<schemas::kg_type_spec> type_specs(const kg::bundle& b) {
  std::vector<schemas::kg_type_spec> types;
  for (const auto& [name, et] : b.types) {
    schemas::kg_type_spec s;
    s.name = name;
    s.id_field = et.id_field;
    s.description = et.description;
    s.expose = et.expose;
    for (const auto& [f, _] : et.indexed)
      s.indexed.push_back(f);
    for (const auto& [f, r] : et.refs)
      s.refs[f] = r.type;
    s.schema = et.schema.dump();
    types.push_back(std::move(s));
  }
  return types;
}

/// A tool of `types` that another bundle of the organisation already exposes, said as the store would.
std::optional<std::string> tool_collision(const json& current, const std::string& bundle,
                                          const std::vector<schemas::kg_type_spec>& types,
                                          const std::string& organization) {
  for (const auto& other : current["bundles"]) {
    if (other.value("name", "") == bundle)
      continue;
    for (const auto& ot : other.value("types", json::array()))
      for (const auto& tool : ot.value("tools", json::array()))
        for (const auto& s : types)
          for (const auto& mine : schemas::kg_tool_names(s))
            if (mine == tool)
              return "tool_name_collision_in_tenant: " + mine + " is already exposed by bundle '" +
                     other.value("name", "") + "' of organisation " + organization;
  }
  return std::nullopt;
}

/// The apply's records: chunk 0 carries the types; every chunk's entities stay under the byte
/// bound. Empty (with the reason on `err`) when an entity alone exceeds it.
std::optional<std::vector<schemas::log_payload>> apply_records(const kg::bundle& b, const schemas::kg_command& head,
                                                               std::size_t& entities, std::ostream& err) {
  std::vector<schemas::kg_command> chunks{head};
  std::size_t bytes = schemas::to_json(head).size();
  for (const auto& [name, et] : b.types)
    for (const auto& e : et.entities) {
      json data = e;
      data.update(kg::derived_values(b, name, e));
      const auto& idv = e[et.id_field];
      schemas::kg_item item{name, idv.is_string() ? idv.get<std::string>() : idv.dump(), data.dump()};
      const auto size = item.data.size() + item.id.size() + name.size() + 32;
      if (size > schemas::kg_limits::chunk_bytes) {
        err << "kg apply: " << name << " '" << item.id << "' is " << size
            << " bytes of JSON, more than a record holds (" << schemas::kg_limits::chunk_bytes
            << "); nothing was written\n";
        return std::nullopt;
      }
      if (bytes + size > schemas::kg_limits::chunk_bytes) {
        schemas::kg_command next = head;
        next.types.clear();
        next.version.clear();
        next.description.clear();
        next.items.clear();
        chunks.push_back(std::move(next));
        bytes = 0;
      }
      bytes += size;
      chunks.back().items.push_back(std::move(item));
      ++entities;
    }
  std::vector<schemas::log_payload> records;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    chunks[i].chunk = static_cast<std::uint32_t>(i);
    chunks[i].chunks = static_cast<std::uint32_t>(chunks.size());
    chunks[i].event_id = "kg-" + head.apply_id + "-" + std::to_string(i);
    records.emplace_back(std::move(chunks[i]));
  }
  return records;
}

}  // namespace

int kg_apply(const kg_options& o, std::ostream& out, std::ostream& err) {
  auto loaded = kg::load_bundle(o.bundle);
  if (auto* errors = std::get_if<std::vector<kg::bundle_error>>(&loaded)) {
    for (const auto& e : *errors)
      err << e.to_string() << "\n";
    err << "kg apply: " << errors->size() << " problem" << (errors->size() == 1 ? "" : "s") << " in " << o.bundle
        << "; nothing was written\n";
    return 1;
  }
  const auto& b = std::get<kg::bundle>(loaded);
  for (const auto& w : b.warnings)
    err << "warning: " << w << "\n";
  auto t = connect(o, "kg apply", err);
  if (!t)
    return 2;
  // What the store would refuse, said before anything is written (the store checks again).
  const auto types = type_specs(b);
  auto current = bundles(*t, "", "kg apply", err);
  if (!current)
    return 1;
  if (auto collision = tool_collision(*current, b.name, types, o.organization)) {
    err << "kg apply: " << *collision << "; nothing was written\n";
    return 1;
  }
  schemas::kg_command head;
  stamp(head, o.organization);
  head.op = schemas::kg_op::apply;
  head.bundle = b.name;
  char id[48];
  std::snprintf(id, sizeof id, "%llx-%x", static_cast<unsigned long long>(head.issued_at_ms),
                static_cast<unsigned>(::getpid()));
  head.apply_id = id;
  head.version = b.version;
  head.description = b.description;
  head.types = types;
  std::size_t entities = 0;
  auto records = apply_records(b, head, entities, err);
  if (!records)
    return 1;
  const auto t0 = std::chrono::steady_clock::now();
  if (!append(*t, *records, "kg apply", err))
    return 1;
  auto st = wait_for(
      *t, o, b.name,
      [&](const json& s) {
        return s.value("applyId", "") == head.apply_id &&
               (s.value("state", "") == "applied" || s.value("state", "") == "rejected");
      },
      "kg apply", err);
  if (st.is_null())
    return 1;
  if (st.value("state", "") == "rejected") {
    err << "kg apply: refused: " << st.value("error", "") << "\n";
    return 1;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out << "applied bundle " << b.name << " " << b.version << " to organisation " << o.organization << ": " << entities
      << " entities of " << b.types.size() << " types in " << records->size() << " record"
      << (records->size() == 1 ? "" : "s") << ", visible after " << std::fixed;
  out.precision(2);
  out << secs << " s\n";
  for (const auto& s : types) {
    std::string tools;
    for (const auto& x : schemas::kg_tool_names(s))
      tools += " " + x;
    out << "  " << s.name << ":" << tools << "\n";
  }
  return 0;
}

int kg_delete(const kg_options& o, std::ostream& out, std::ostream& err) {
  if (!schemas::valid_bundle_name(o.bundle)) {
    err << "kg delete: '" << o.bundle << "' is not a bundle name ([a-z0-9-]+)\n";
    return 2;
  }
  auto t = connect(o, "kg delete", err);
  if (!t)
    return 2;
  schemas::kg_command c;
  stamp(c, o.organization);
  c.op = schemas::kg_op::remove;
  c.bundle = o.bundle;
  char id[64];
  std::snprintf(id, sizeof id, "kg-delete-%llx-%x", static_cast<unsigned long long>(c.issued_at_ms),
                static_cast<unsigned>(::getpid()));
  c.event_id = id;
  if (!append(*t, {schemas::log_payload{c}}, "kg delete", err))
    return 1;
  auto st = wait_for(
      *t, o, o.bundle, [&](const json& s) { return s.value("eventId", "") == c.event_id; }, "kg delete", err);
  if (st.is_null())
    return 1;
  if (st.value("state", "") == "absent") {
    err << "kg delete: organisation " << o.organization << " has no bundle '" << o.bundle << "'\n";
    return 1;
  }
  out << "deleted bundle " << o.bundle << " of organisation " << o.organization << " (its tools are gone)\n";
  return 0;
}

int kg_list(const kg_options& o, std::ostream& out, std::ostream& err) {
  auto t = connect(o, "kg list", err);
  if (!t)
    return 2;
  auto j = bundles(*t, "", "kg list", err);
  if (!j)
    return 1;
  for (const auto& b : (*j)["bundles"]) {
    std::uint64_t n = 0;
    std::string types;
    for (const auto& ty : b["types"]) {
      n += ty.value("entities", std::uint64_t{0});
      types += (types.empty() ? "" : ", ") + ty.value("name", "");
    }
    out << b.value("name", "") << " " << b.value("version", "") << ": " << n << " entities (" << types << "), applied "
        << b.value("appliedAt", "") << "\n";
  }
  return 0;
}

int kg_show(const kg_options& o, std::ostream& out, std::ostream& err) {
  if (!schemas::valid_bundle_name(o.bundle)) {
    err << "kg show: '" << o.bundle << "' is not a bundle name ([a-z0-9-]+)\n";
    return 2;
  }
  auto t = connect(o, "kg show", err);
  if (!t)
    return 2;
  auto j = bundles(*t, o.bundle, "kg show", err);
  if (!j)
    return 1;
  if ((*j)["bundles"].empty()) {
    err << "kg show: organisation " << o.organization << " has no bundle '" << o.bundle << "'\n";
    return 1;
  }
  out << (*j)["bundles"][0].dump(2) << "\n";
  return 0;
}

}  // namespace engram::ctl
