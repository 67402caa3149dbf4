// libFuzzer: kag_query's query reader (query/kag.hpp) over a real graph store: the
// question as an agent sends it (the entities it names by name, alias or a fuzzy match, the
// relation words that steer the walk, the statements' fallback through reading's content
// words) and the hint entities. The first byte picks max_hops, limit and include_relations;
// the rest is the question, then one hint entity per line.
#include "query/entity_graph.hpp"
#include "query/kag.hpp"
#include "reading/signature.hpp"
#include "schemas/time.hpp"
#include "schemas/knowledge.hpp"
#include "storage/graph_store.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

namespace {

using namespace engram;

/// A small organisation graph: people, companies, technologies and a reporting line, plus
/// one message's statement for the fallback. Built once; the store is only read after.
struct graph {
  std::string path =
      (std::filesystem::temp_directory_path() / ("engram-fuzz-kag-" + std::to_string(::getpid()))).string();
  std::shared_ptr<storage::graph_store> store;
  std::unique_ptr<query::entity_reader> reader;
  std::int64_t offset = 0;

  graph() {
    std::filesystem::remove_all(path);
    auto s = storage::open_graph_store({path});
    if (!s)
      std::abort();
    store = std::move(*s);
    reader =
        std::make_unique<query::entity_reader>(store, std::map<std::string, std::string>{{"saas_company", "company"}});
    schemas::entity_command add;
    add.op = schemas::entity_op::add_entities;
    for (const auto& [name, type] : std::vector<std::pair<std::string, std::string>>{{"Dana Kim", "person"},
                                                                                     {"Mei Chen", "person"},
                                                                                     {"Sam Lee", "person"},
                                                                                     {"Ava Ng", "person"},
                                                                                     {"Globex", "organization"},
                                                                                     {"Initech", "saas_company"},
                                                                                     {"Snowflake", "technology"},
                                                                                     {"Project Falcon", "project"}})
      add.entities.push_back({name, type, {}, {"seen in the fuzz graph"}});
    apply(add);
    schemas::entity_command relate;
    relate.op = schemas::entity_op::relate;
    relate.relations = {{"Dana Kim", "Sam Lee", "reports_to", 1.0, {}},  {"Ava Ng", "Sam Lee", "reports_to", 1.0, {}},
                        {"Sam Lee", "Mei Chen", "reports_to", 1.0, {}},  {"Dana Kim", "Globex", "works_at", 1.0, {}},
                        {"Globex", "Snowflake", "uses", 0.7, {}},        {"Initech", "Globex", "partner_of", 1.0, {}},
                        {"Mei Chen", "Project Falcon", "leads", 1.0, {}}};
    apply(relate);

    schemas::inbound_message m;
    m.event_id = "m-1";
    m.organization_id = "acme";
    m.sent_at = "2026-05-01T10:00:00Z";
    m.sent_at_ms = *schemas::parse_rfc3339(m.sent_at);
    m.from = {"Dana Kim", "dana@acme.example", ""};
    m.subject = "Hosting";
    m.body = "Globex moved its hosting to Hetzner.";
    schemas::extraction x;
    x.mentions.push_back({schemas::entity_kind::organization, "Globex", "Globex", {}, {}, {}, {}, {}});
    x.mentions.push_back({schemas::entity_kind::technology, "Hetzner", "Hetzner", {}, {}, {}, {}, {}});
    schemas::entry e;
    e.type = schemas::entry_type::fact;
    e.title = e.content = m.body;
    e.confidence = 0.8;
    e.mentions = {0, 1};
    e.sig.words = reading::content_words(m.body);
    x.entries.push_back(e);
    storage::apply_outcome how{};
    if (store->apply({"engram-log", 0, ++offset, "fuzz"}, &m, &x, nullptr, &how) != storage::errc::ok)
      std::abort();
  }
  ~graph() {
    reader.reset();
    store.reset();
    std::filesystem::remove_all(path);
  }
  void apply(schemas::entity_command c) {
    c.event_id = "ent-" + std::to_string(++offset);
    c.organization_id = "acme";
    c.issued_at = "2026-05-01T10:00:00.000Z";
    c.issued_at_ms = *schemas::parse_rfc3339(c.issued_at);
    storage::entity_result r;
    storage::apply_outcome how{};
    if (store->apply_entity_command({"engram-log", 0, offset, "fuzz"}, c, &r, &how) != storage::errc::ok ||
        !r.error.empty())
      std::abort();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static graph g;
  if (size == 0)
    return 0;
  query::kag_request r;
  r.max_hops = data[0] % 4;
  r.limit = 1 + (data[0] >> 2) % 20;
  r.include_relations = (data[0] & 0x80) == 0;
  r.terms = reading::index_terms;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto line = text.find('\n');
  r.query = text.substr(0, line);
  for (auto at = line; at != std::string::npos;) {
    const auto next = text.find('\n', at + 1);
    r.entities.push_back(text.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1));
    at = next;
  }
  (void)query::entities_named(*g.store, "acme", r.query);
  if (query::check(r))
    return 0;  // out of the seed's limits: refused before any read
  const auto a = query::kag_query(*g.reader, "acme", r);
  if (a.entities.size() > r.limit)
    std::abort();
  for (const auto& e : a.entities)
    if (e.distance > r.max_hops)
      std::abort();
  if (!r.include_relations && !a.relations.empty())
    std::abort();
  return 0;
}
