#include "tools/engramctl/docs.hpp"

#include "reading/signature.hpp"
#include "base/hash.hpp"

#include "actors/ingest/producer.hpp"
#include "query/kag.hpp"
#include "knowledge/write_rules.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/time.hpp"
#include "storage/graph_store.hpp"
#include "tools/engramctl/entities.hpp"
#include "tools/mail/mail_reader.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <optional>
#include <sstream>

namespace engram::ctl {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string file_time(const std::string& path) {
  std::error_code ec;
  const auto t = fs::last_write_time(path, ec);
  if (ec)
    return "1970-01-01T00:00:00Z";
  const auto sys = std::chrono::file_clock::to_sys(t);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(sys.time_since_epoch()).count();
  return schemas::format_rfc3339(ms / 1000 * 1000);
}

/// What is wrong with the options, or nothing.
std::optional<std::string> usage_error(const ingest_options& o) {
  if (o.brokers.empty() == o.output.empty())
    return "give --brokers ADDR (produce) or --output FILE (JSONL)";
  if (o.chunk_chars < 200)
    return "--chunk-chars: at least 200";
  if (!o.sent_at.empty() && !schemas::parse_rfc3339(o.sent_at))
    return "--sent-at: must be an RFC 3339 date-time such as 2026-03-05T10:00:00Z";
  return std::nullopt;
}

/// Every file under the paths, in name order; empty (with the path named on `err`) when one is missing.
std::optional<std::vector<std::string>> files_under(const std::vector<std::string>& paths, std::ostream& err) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file())
          files.push_back(e.path().string());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      err << p << ": no such file or folder\n";
      return std::nullopt;
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// Chunk `i` of document `d` (read from `file`) as an inbound event.
schemas::inbound_message chunk_event(const document& d, std::size_t i, const std::string& file, const ingest_options& o,
                                     const std::string& sent) {
  schemas::inbound_message m;
  std::ostringstream id;
  id << d.id << "-" << std::setw(4) << std::setfill('0') << i;
  m.event_id = id.str();
  m.organization_id = o.organization;
  m.source = schemas::source_type::file;
  m.source_id = fs::path(file).filename().string().substr(0, 200);
  m.thread_id = d.id;
  m.sent_at = sent;
  m.from = {"", "ingest-docs", ""};
  m.subject = d.chunks[i].section.empty() ? d.title : d.title + " — " + d.chunks[i].section;
  if (m.subject.size() > 1000)
    m.subject.resize(1000);
  m.body = d.chunks[i].text;
  m.document = schemas::document_ref{d.id, d.title.substr(0, 1000), d.chunks[i].section.substr(0, 1000),
                                     static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(d.chunks.size())};
  return m;
}

}  // namespace

int ingest_docs(const ingest_options& o, std::ostream& out, std::ostream& err) {
  if (auto usage = usage_error(o)) {
    err << "ingest-docs: " << *usage << "\n";
    return 2;
  }
  auto listed = files_under(o.paths, err);
  if (!listed)
    return 1;
  const auto& files = *listed;
  std::unique_ptr<ingest::kafka_producer> producer;
  std::ofstream file_out;
  if (!o.brokers.empty()) {
    auto made = ingest::kafka_producer::create(o.brokers, {});
    if (!made) {
      err << "ingest-docs: " << made.error() << "\n";
      return 1;
    }
    producer = std::move(*made);
  } else {
    file_out.open(o.output);
    if (!file_out) {
      err << "ingest-docs: cannot write " << o.output << "\n";
      return 1;
    }
  }
  std::size_t documents = 0, chunks = 0, failed = 0, pages = 0;
  for (const auto& f : files) {
    document d;
    std::string why;
    if (!read_document(f, o.chunk_chars, &d, &why)) {
      ++failed;
      err << f << ": " << why << "\n";
      continue;
    }
    const auto sent = o.sent_at.empty() ? file_time(f) : o.sent_at;
    for (std::size_t i = 0; i < d.chunks.size(); ++i) {
      const auto event = schemas::to_json(chunk_event(d, i, f, o, sent));
      // What engramd will refuse is refused here, with the file named.
      schemas::inbound_message check;
      if (auto bad = schemas::decode(event, {}, check)) {
        err << f << ": chunk " << i << ": " << bad->to_string() << "\n";
        ++failed;
        break;
      }
      if (producer) {
        if (!producer->produce(o.topic, o.organization, event)) {
          err << "ingest-docs: " << producer->last_error() << "\n";
          return 1;
        }
      } else {
        file_out << event << "\n";
      }
      ++chunks;
    }
    ++documents;
    pages += d.pages;
  }
  if (producer && !producer->flush(std::chrono::seconds(60))) {
    err << "ingest-docs: " << producer->last_error() << "\n";
    return 1;
  }
  out << "ingested " << documents << " documents (" << pages << " pages) as " << chunks << " chunks"
      << (producer ? " to " + o.topic : " to " + o.output) << ", " << failed << " failed\n";
  return failed ? 1 : 0;
}

int kag_status(const kag_options& o, std::ostream& out, std::ostream& err) {
  auto r = open_reader(o.data_dir, "kag", err);
  if (!r)
    return 1;
  const auto docs = r->store().documents(o.organization);
  if (docs.empty()) {
    out << "no documents" << (o.organization.empty() ? "" : " in organisation " + o.organization) << "\n";
    return 0;
  }
  for (const auto& d : docs) {
    const auto pending = d.pending();
    out << d.organization_id << "  " << d.id << "  \"" << d.title << "\"  "
        << (d.failed  ? "failed"
            : pending ? "pending"
                      : "done")
        << "  " << d.done << "/" << d.chunks << " chunks, " << d.entries << " entries, " << d.entities << " entities, "
        << d.relations << " relations";
    if (d.failed)
      out << "; " << d.failed << " failed: " << d.error;
    out << "\n";
  }
  return 0;
}

int kag_query(const kag_options& o, std::ostream& out, std::ostream& err) {
  query::kag_request q;
  q.query = o.query;
  q.max_hops = o.max_hops;
  q.limit = o.limit;
  q.terms = reading::index_terms;
  if (auto bad = query::check(q)) {
    err << "kag query: " << *bad << "\n";
    return 2;
  }
  auto r = open_reader(o.data_dir, "kag", err);
  if (!r)
    return 1;
  const auto a = query::kag_query(*r, o.organization, q);
  if (!o.json) {
    out << a.context;
    return 0;
  }
  json entities = json::array(), relations = json::array();
  for (const auto& e : a.entities)
    entities.push_back({{"id", e.id},
                        {"name", e.name},
                        {"type", e.type},
                        {"description", e.description},
                        {"confidence", e.confidence},
                        {"distance", e.distance}});
  for (const auto& rel : a.relations)
    relations.push_back({{"subject", rel.subject},
                         {"predicate", rel.predicate},
                         {"object", rel.object},
                         {"confidence", rel.confidence},
                         {"statement", rel.statement}});
  out << json{{"entities", entities},
              {"relations", relations},
              {"context", a.context},
              {"total_entities", a.total_entities}}
             .dump()
      << "\n";
  return 0;
}

}  // namespace engram::ctl
