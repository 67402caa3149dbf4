// engramctl: operations and development commands for Engram.
//   devbroker  a standalone Kafka mock cluster (librdkafka), for tests and local runs
//   produce    validate a JSONL file of inbound events and produce it (key = organizationId)
//   digest     a stable hash of a store's logical content
//   extract    what extraction reads from inbound events, without broker or store
//   import     e-mail files (.eml, mbox, maildir) to inbound events
//   stats      engramd's /v1/stats
//   kg         knowledge bundles: validate, apply, delete, list, show; the Bowtie harness
//   replay     rebuild the graph from engram-log into a new store, then print its digest
//              (--re-extract: read every message again with today's extractor and encoder)
#include "actors/engine/engine.hpp"
#include "reading/cleaner.hpp"
#include "reading/extract.hpp"
#include "reading/rules.hpp"
#include "embedding/type_model.hpp"
#include "actors/ingest/embedded_broker.hpp"
#include "actors/ingest/producer.hpp"
#include "kg/bowtie.hpp"
#include "kg/bundle.hpp"
#include "net/http.hpp"
#include "storage/graph_store.hpp"
#include "config/config.hpp"
#include "tools/engramctl/docs.hpp"
#include "tools/engramctl/entities.hpp"
#include "tools/engramctl/kg.hpp"
#include "tools/mail/mail_reader.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <csignal>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <iostream>

extern char** environ;

namespace {

/// Rebuilds the graph from offset 0 of every engram-log partition into `into` (new or
/// empty) in a consumer group of its own, up to the high-water marks seen when its
/// partitions were assigned; writes to no topic; then prints, per partition, the offsets read
/// and the records by kind, and the new store's digest. A partition whose first records were
/// deleted from the broker fails the replay (exit 1, the partition and the count named)
/// unless `accept_partial`: then it rebuilds from what is left and says what is missing.
/// `re_extract`: what the records say was read is ignored and every message is read again
/// (rules or model upgrades): a new digest, by design.
int replay(const std::string& config_path, const std::vector<std::string>& overrides, const std::string& into,
           bool re_extract, bool accept_partial) {
  auto loaded = engram::config::load(config_path, overrides, environ);
  if (!loaded) {
    std::cerr << "replay: " << loaded.error() << "\n";
    return 2;
  }
  auto cfg = *loaded;
  if (cfg.kafka.embedded()) {
    std::cerr << "replay: kafka.brokers is 'embedded' (an in-process broker that starts empty): give the brokers that "
                 "hold engram-log, e.g. --set kafka.brokers=host:9092\n";
    return 2;
  }
  std::error_code ec;
  if (std::filesystem::exists(into, ec) && !std::filesystem::is_empty(into, ec)) {
    std::cerr << "replay: --into " << into << " is not empty: replay builds a new store\n";
    return 2;
  }
  cfg.storage.path = into;
  cfg.samples.load = false;
  cfg.kafka.group_id += "-replay-" + std::to_string(::getpid()) + "-" +
                        std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  engram::engine::engine_options opts;
  opts.replay = true;
  opts.re_extract = re_extract;
  opts.accept_partial = accept_partial;
  auto t0 = std::chrono::steady_clock::now();
  auto started = engram::engine::engine::start(cfg, std::move(opts));
  if (!started) {
    std::cerr << "replay: " << started.error() << "\n";
    return 1;
  }
  auto engine = std::move(*started);
  const bool tty = ::isatty(STDERR_FILENO);
  std::int64_t last_report = -1;
  while (!engine->status().ready()) {
    if (engine->failed()) {
      std::cerr << "\nreplay: the pipeline failed (see the log); the new store is incomplete\n";
      return 1;
    }
    if (auto gaps = engine->gaps().open(); !gaps.empty()) {
      std::cerr << (tty ? "\n" : "");
      for (const auto& g : gaps)
        std::cerr << "replay: " << g.describe() << "\n";
      std::cerr << "replay: refusing a partial rebuild: the new store in " << into
                << " is incomplete (--accept-partial rebuilds from what is left and says what is missing)\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::int64_t done = 0, target = 0;
    for (const auto& [p, st] : engine->status().partitions()) {
      done += st.next_offset;
      target += st.catch_up_target;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rate = secs > 0 ? double(done) / secs : 0;
    const double eta = rate > 0 ? double(target - done) / rate : 0;
    if (tty) {
      std::fprintf(stderr, "\rreplay: %lld / %lld records, %.0f/s, lag %lld, ETA %.0f s   ",
                   static_cast<long long>(done), static_cast<long long>(target), rate,
                   static_cast<long long>(target - done), eta);
    } else if (done / 10000 != last_report) {
      last_report = done / 10000;
      std::fprintf(stderr, "replay: %lld / %lld records\n", static_cast<long long>(done), static_cast<long long>(target));
    }
  }
  std::int64_t records = 0;
  const auto partitions = engine->status().partitions();
  const auto accepted = engine->gaps().accepted();
  engine->stop();
  engine.reset();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto store = engram::storage::open_graph_store({into, /*read_only=*/true});
  if (!store) {
    std::cerr << "replay: " << store.error() << "\n";
    return 1;
  }
  if (tty)
    std::fputc('\n', stderr);
  for (const auto& [p, st] : partitions) {
    std::int64_t read = 0;
    std::string kinds;
    for (const auto& [kind, n] : st.kinds) {
      read += static_cast<std::int64_t>(n);
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    }
    records += read;
    if (st.first_read < 0)
      std::fprintf(stderr, "replay: partition %d: nothing to read (end offset %lld)\n", p,
                   static_cast<long long>(st.catch_up_target));
    else
      std::fprintf(stderr, "replay: partition %d: offsets %lld..%lld read (end offset %lld): %lld records: %s\n", p,
                   static_cast<long long>(st.first_read), static_cast<long long>(st.last_read),
                   static_cast<long long>(st.catch_up_target), static_cast<long long>(read), kinds.c_str());
  }
  std::int64_t missing = 0;
  for (const auto& g : accepted) {
    missing += g.lost();
    std::fprintf(stderr, "replay: MISSING %s (--accept-partial)\n", g.describe().c_str());
  }
  std::fprintf(stderr, "replay: %lld records of engram-log into %s in %.1f s (%.0f records/s)\n",
               static_cast<long long>(records), into.c_str(), secs, secs > 0 ? double(records) / secs : 0.0);
  if (!accepted.empty())
    std::fprintf(stderr, "replay: PARTIAL rebuild: %lld records of engram-log were deleted before this replay and "
                         "are not in %s; its digest differs from a complete store's\n",
                 static_cast<long long>(missing), into.c_str());
  if (re_extract)
    std::fprintf(stderr, "replay: every message was read again with today's extractor and encoder (--re-extract): "
                         "this digest is new by design and differs from the live store's wherever the reading "
                         "changed\n");
  std::printf("%s\n", (*store)->digest().c_str());
  return 0;
}

int devbroker(int partitions, const std::string& bootstrap_file, const std::vector<std::string>& topics) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto started = engram::ingest::embedded_broker::start(topics, partitions);
  if (!started) {
    std::cerr << "devbroker: " << started.error() << "\n";
    return 1;
  }
  auto& broker = *started;
  if (!bootstrap_file.empty()) {
    // Written whole, then renamed: a reader never sees half an address.
    auto tmp = bootstrap_file + ".tmp";
    std::ofstream(tmp) << broker->bootstrap() << "\n";
    if (std::rename(tmp.c_str(), bootstrap_file.c_str()) != 0) {
      std::cerr << "devbroker: cannot write " << bootstrap_file << "\n";
      return 1;
    }
  }
  std::cout << broker->bootstrap() << std::endl;
  std::cerr << "devbroker: " << partitions << " partitions per topic; stop with SIGTERM or Ctrl-C\n"
            << "devbroker: a test broker (librdkafka's mock cluster, in memory): each partition keeps about "
               "5 MiB and silently drops its oldest records past that; Engram then stops at the gap (replay "
               "refuses it). Spread large streams over more partitions (--partitions), or use a real Kafka\n";
  int sig = 0;
  sigwait(&signals, &sig);
  return 0;
}

/// stdin for "-", else `file` opened into `f`; null (reported) when it cannot be read.
std::istream* open_input(const std::string& file, std::ifstream& f, const char* who) {
  if (file == "-")
    return &std::cin;
  f.open(file);
  if (!f) {
    std::cerr << who << ": cannot read " << file << "\n";
    return nullptr;
  }
  return &f;
}

int produce(const std::string& brokers, const std::string& topic, const std::string& file, std::uint64_t max_bytes) {
  auto made = engram::ingest::kafka_producer::create(brokers, {});
  if (!made) {
    std::cerr << "produce: " << made.error() << "\n";
    return 1;
  }
  auto& producer = *made;
  std::ifstream f;
  std::istream* in = open_input(file, f, "produce");
  if (!in)
    return 1;
  auto report = engram::ingest::produce_events(*producer, topic, *in, max_bytes);
  for (const auto& p : report.problems)
    std::cerr << file << ": " << p << "\n";
  if (!report.error.empty()) {
    std::cerr << "produce: " << report.error << "\n";
    return 1;
  }
  std::cout << "produced " << report.produced << " events to " << topic << ", rejected " << report.rejected << "\n";
  return report.rejected ? 1 : 0;
}

/// One JSON line per event: its ids and what extraction read. Invalid lines are reported
/// on stderr with their line number and skipped.
int extract(const std::string& file, double threshold, bool explain, const std::string& bulk,
            const std::string& model_path) {
  std::ifstream f;
  std::istream* in = open_input(file, f, "extract");
  if (!in)
    return 1;
  engram::reading::validator_options opts;
  if (!model_path.empty()) {
    auto types = engram::embedding::load_type_model(model_path);
    if (!types) {
      std::cerr << "extract: " << types.error() << " (tools/dev.sh setup fetches it; --no-type-model reads with the cues alone)\n";
      return 1;
    }
    opts.types = std::move(*types);
  }
  opts.confidence_threshold = threshold;
  opts.bulk = bulk == "keep"             ? engram::reading::bulk_policy::keep
              : bulk == "low_confidence" ? engram::reading::bulk_policy::low_confidence
                                         : engram::reading::bulk_policy::skip;
  std::string line;
  std::size_t lineno = 0, bad = 0;
  while (std::getline(*in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    engram::schemas::inbound_message m;
    if (auto err = engram::schemas::decode(line, {}, m)) {
      std::cerr << file << ": line " << lineno << ": " << err->to_string() << "\n";
      ++bad;
      continue;
    }
    engram::reading::validation_report report;
    auto x = engram::reading::extract_validated(m, opts, &report);
    auto doc = nlohmann::json::parse(engram::schemas::to_json(x));
    nlohmann::json out{{"eventId", m.event_id}, {"organizationId", m.organization_id}};
    out.update(doc);
    if (!report.injection_signals.empty())
      out["injectionSignals"] = report.injection_signals;
    out["messageClass"] = std::string(engram::reading::to_string(report.verdict.cls));
    if (!report.verdict.signals.empty())
      out["classSignals"] = report.verdict.signals;
    if (explain) {
      auto cleaned = engram::reading::clean(m.body, m.from.name);
      out["cleanedText"] = cleaned.text;
      out["sentences"] = engram::reading::split_sentences(cleaned.text);
    }
    std::cout << out.dump() << "\n";
  }
  return bad ? 1 : 0;
}

/// Reads e-mail files and produces one inbound event per message (or writes them as JSONL).
int import(const std::string& brokers, const std::string& output, const std::string& organization,
           const std::string& topic, const std::vector<std::string>& paths) {
  {
    engram::schemas::inbound_message probe;
    std::string doc = R"({"eventId":"x","organizationId":")" + organization +
                      R"(","sourceType":"email","sentAt":"2026-01-01T00:00:00Z","from":{"address":"a@b"},"body":""})";
    if (auto err = engram::schemas::decode(doc, {}, probe)) {
      std::cerr << "import: --organization: " << err->reason << "\n";
      return 2;
    }
  }
  auto listed = engram::mail::list_files(paths);
  if (!listed) {
    std::cerr << "import: " << listed.error() << "\n";
    return 1;
  }
  const auto& files = *listed;
  std::unique_ptr<engram::ingest::kafka_producer> producer;
  std::ofstream out;
  if (!brokers.empty()) {
    auto made = engram::ingest::kafka_producer::create(brokers, {});
    if (!made) {
      std::cerr << "import: " << made.error() << "\n";
      return 1;
    }
    producer = std::move(*made);
  } else {
    out.open(output);
    if (!out) {
      std::cerr << "import: cannot write " << output << "\n";
      return 1;
    }
  }
  const bool tty = ::isatty(2);
  std::size_t done_files = 0, events = 0, malformed = 0;
  auto last = std::chrono::steady_clock::now();
  auto progress = [&](bool final) {
    if (!tty)
      return;
    auto now = std::chrono::steady_clock::now();
    if (!final && now - last < std::chrono::milliseconds(100))
      return;
    last = now;
    constexpr int width = 30;
    int filled = files.empty() ? width : static_cast<int>(width * done_files / files.size());
    std::cerr << "\r[" << std::string(static_cast<std::size_t>(filled), '=') << std::string(static_cast<std::size_t>(width - filled), ' ')
              << "] " << done_files << "/" << files.size() << " files, " << events << " events, " << malformed
              << " malformed" << std::flush;
    if (final)
      std::cerr << "\n";
  };
  engram::mail::read_options opts;
  opts.organization_id = organization;
  for (const auto& f : files) {
    engram::mail::read_file(f, opts, [&](engram::mail::mail_result r) {
      if (!r.error.empty()) {
        ++malformed;
        if (tty)
          std::cerr << "\r\033[K";
        std::cerr << r.source << ": " << r.error << "\n";
        return;
      }
      if (producer) {
        auto org_key = organization;
        if (!producer->produce(topic, org_key, r.event_json)) {
          std::cerr << "import: " << producer->last_error() << "\n";
          return;
        }
      } else {
        out << r.event_json << "\n";
      }
      ++events;
    });
    ++done_files;
    progress(false);
  }
  progress(true);
  if (producer && !producer->flush(std::chrono::seconds(60))) {
    std::cerr << "import: " << producer->last_error() << "\n";
    return 1;
  }
  std::cout << "imported " << events << " events from " << files.size() << " files"
            << (producer ? " to " + topic : " to " + output) << ", " << malformed << " malformed\n";
  return 0;
}

/// Printable ASCII as is, every other byte (and the backslash) as \xNN.
std::string escaped(std::string_view bytes) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

int digest(const std::string& dir, bool dump) {
  auto store = engram::storage::open_graph_store({dir, /*read_only=*/true});
  if (!store) {
    std::cerr << "digest: " << store.error() << "\n";
    return 1;
  }
  if (dump) {
    // One line a key: its column family, key and value, tab-separated, in the digest's order.
    std::string family;
    (*store)->visit_logical([&](std::string_view name) { family = name; },
                            [&](std::string_view k, std::string_view v) {
                              std::cout << family << '\t' << escaped(k) << '\t' << escaped(v) << '\n';
                            });
  }
  std::cout << (*store)->digest() << "\n";
  return 0;
}

int kg_validate_bundle(const std::string& dir) {
  auto loaded = engram::kg::load_bundle(dir);
  if (auto* errors = std::get_if<std::vector<engram::kg::bundle_error>>(&loaded)) {
    for (const auto& e : *errors)
      std::cerr << e.to_string() << "\n";
    std::cerr << "kg validate: " << errors->size() << " problem" << (errors->size() == 1 ? "" : "s") << " in " << dir
              << "\n";
    return 1;
  }
  const auto& b = std::get<engram::kg::bundle>(loaded);
  for (const auto& w : b.warnings)
    std::cerr << "warning: " << w << "\n";
  std::size_t entities = 0;
  for (const auto& [name, t] : b.types)
    entities += t.entities.size();
  std::cout << "bundle " << b.name << " " << b.version << ": " << b.types.size() << " types, " << entities
            << " entities, valid\n";
  for (const auto& [name, t] : b.types) {
    std::string tools;
    for (const auto& x : t.expose)
      tools += " " + (x == "list_ids" ? "list_" + name + "_ids" : x + "_" + name);
    std::cout << "  " << name << ": " << t.entities.size() << " entities, id " << t.id_field << ", tools" << tools << "\n";
  }
  return 0;
}

int stats(std::string url) {
  if (url.find("/v1/stats") == std::string::npos) {
    while (!url.empty() && url.back() == '/')
      url.pop_back();
    url += "/v1/stats";
  }
  auto res = engram::http::fetch("GET", url);
  if (res.status == 0) {
    std::cerr << "stats: " << res.error << "\n";
    return 1;
  }
  auto doc = nlohmann::json::parse(res.body, nullptr, false);
  std::cout << (doc.is_discarded() ? res.body : doc.dump(2)) << "\n";
  return res.status == 200 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  CLI::App app{"engramctl: operate Engram"};
  app.require_subcommand(1);

  auto* db = app.add_subcommand("devbroker", "Run a standalone Kafka mock cluster until SIGTERM");
  int partitions = 4;
  std::string bootstrap_file;
  std::vector<std::string> topics{"inbound-messages", "engram-log", "engram-reminders", "engram-dlq"};
  db->add_option("--partitions", partitions, "Partitions per topic")->capture_default_str()->check(CLI::Range(1, 64));
  db->add_option("--bootstrap-file", bootstrap_file, "Write the bootstrap address to this file");
  db->add_option("--topics", topics, "Topics to create")->capture_default_str()->delimiter(',');

  auto* pr = app.add_subcommand("produce", "Validate inbound events (JSONL) and produce them, key = organizationId");
  std::string brokers, topic = "inbound-messages", file;
  std::uint64_t max_bytes = 1048576;
  pr->add_option("--brokers", brokers, "Bootstrap servers")->required();
  pr->add_option("--topic", topic, "Topic")->capture_default_str();
  pr->add_option("--max-event-bytes", max_bytes, "Refuse larger events")->capture_default_str();
  pr->add_option("file", file, "JSONL file, or - for stdin")->required();

  auto* dg = app.add_subcommand("digest", "Print the hash of a store's logical content");
  std::string data_dir;
  dg->add_option("--data-dir", data_dir, "The store's directory (storage.path)")->required();
  bool dump = false;
  dg->add_flag("--dump", dump,
               "First print what the digest hashes, one key a line (column family, key, value; tab-separated, "
               "bytes outside printable ASCII as \\xNN): diff two dumps to see where two stores differ");

  auto* ex = app.add_subcommand("extract", "Print what extraction reads from inbound events (JSONL), one JSON line each");
  std::string extract_file = "-";
  double threshold = 0.6;
  ex->add_option("file", extract_file, "JSONL file, or - for stdin")->capture_default_str();
  ex->add_option("--confidence-threshold", threshold, "Drop entries below")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  bool explain = false;
  ex->add_flag("--explain", explain, "Also print the cleaned text and its sentences");
  std::string extract_bulk = "skip";
  ex->add_option("--bulk", extract_bulk, "Bulk and spam mail: skip, low_confidence or keep (extraction.bulk)")
      ->capture_default_str()
      ->check(CLI::IsMember({"skip", "low_confidence", "keep"}));
  std::string extract_model = ".cache/models/use-lite-en.bin";
  bool no_type_model = false;
  ex->add_option("--model", extract_model, "The USE Lite weights the entry-type model reads with (embedder.model_path)")
      ->capture_default_str();
  ex->add_flag("--no-type-model", no_type_model, "Types from the cues alone (extraction.type_model: false)");

  auto* im = app.add_subcommand("import", "Read .eml, mbox and maildir and produce inbound events");
  std::string import_brokers, import_output, organization, import_topic = "inbound-messages";
  std::vector<std::string> import_paths;
  auto* ib = im->add_option("--brokers", import_brokers, "Bootstrap servers to produce to");
  auto* io = im->add_option("--output", import_output, "Write JSONL here instead of producing");
  ib->excludes(io);
  im->add_option("--organization", organization, "organizationId of every event")->required();
  im->add_option("--topic", import_topic, "Topic")->capture_default_str();
  im->add_option("paths", import_paths, "Files and folders")->required();

  auto* idocs = app.add_subcommand("ingest-docs", "Read text, Markdown, HTML and PDF documents and produce their chunks "
                                                 "as inbound events (sourceType file)");
  engram::ctl::ingest_options ido;
  auto* idb = idocs->add_option("--brokers", ido.brokers, "Bootstrap servers to produce to");
  auto* ido_out = idocs->add_option("--output", ido.output, "Write JSONL here instead of producing");
  idb->excludes(ido_out);
  idocs->add_option("--organization", ido.organization, "organizationId of every event")->required();
  idocs->add_option("--topic", ido.topic, "Topic")->capture_default_str();
  idocs->add_option("--sent-at", ido.sent_at, "sentAt of every event (RFC 3339; default: each file's modification time)");
  idocs->add_option("--chunk-chars", ido.chunk_chars, "Bytes of text a chunk holds at most")->capture_default_str();
  idocs->add_option("paths", ido.paths, "Files and folders (.txt, .md, .markdown, .html, .htm, .pdf)")->required();

  auto* kag = app.add_subcommand("kag", "Graph queries over the relations read from mail and documents (store opened "
                                         "read-only)");
  kag->require_subcommand(1);
  engram::ctl::kag_options kago;
  auto* kag_status = kag->add_subcommand("status", "Each document's chunks applied and pending, and what they gave");
  kag_status->add_option("--data-dir", kago.data_dir, "The store's directory (storage.path)")->required();
  kag_status->add_option("--organization", kago.organization, "Only this organisation");
  auto* kag_query = kag->add_subcommand("query", "kag_query's Markdown context for a question (--json: the whole answer)");
  kag_query->add_option("--data-dir", kago.data_dir, "The store's directory (storage.path)")->required();
  kag_query->add_option("--organization", kago.organization, "The organisation")->required();
  kag_query->add_option("--max-hops", kago.max_hops, "Hops of the walk (0..3)")->capture_default_str();
  kag_query->add_option("--limit", kago.limit, "Entities at most (1..100)")->capture_default_str();
  kag_query->add_flag("--json", kago.json, "Print the whole answer as JSON");
  kag_query->add_option("query", kago.query, "The question")->required();

  auto* st = app.add_subcommand("stats", "Print engramd's /v1/stats");
  std::string url = "http://127.0.0.1:8700";
  st->add_option("--url", url, "engramd's base URL")->capture_default_str();

  auto* rp = app.add_subcommand("replay", "Rebuild the graph from engram-log into a new store and print its digest");
  std::string replay_config = "config/engram.yaml", replay_into;
  std::vector<std::string> replay_overrides;
  rp->add_option("--config", replay_config, "engramd's YAML configuration")->capture_default_str();
  rp->add_option("--set", replay_overrides, "Override a config key (repeatable), as for engramd");
  rp->add_option("--into", replay_into, "The new store's directory (new or empty)")->required();
  bool replay_re_extract = false;
  bool replay_accept_partial = false;
  rp->add_flag("--accept-partial", replay_accept_partial,
               "Rebuild even when records were deleted from engram-log (retention, a full test broker): from what is "
               "left, naming what is missing; without it such a replay fails");
  rp->add_flag("--re-extract", replay_re_extract,
               "Read every logged message again with today's extractor and encoder instead of applying what the "
               "log says was read (for upgrades of the rules or the model; a new digest)");

  auto* en = app.add_subcommand("entities", "Search, show or export an organisation's entity graph (store opened read-only)");
  en->require_subcommand(1);
  engram::ctl::entities_options eo;
  auto* en_search = en->add_subcommand("search", "Fuzzy search over names and aliases, best first (JSON lines)");
  auto* en_show = en->add_subcommand("show", "One entity with its attributes, observations and relations (JSON)");
  auto* en_export = en->add_subcommand(
      "export", "Every entity and relation: JSON Lines in the reference memory server's file format, or Mermaid");
  for (auto* sc : {en_search, en_show, en_export}) {
    sc->add_option("--data-dir", eo.data_dir, "The store's directory (storage.path)")->required();
    sc->add_option("--organization", eo.organization, "organizationId")->required();
  }
  en_search->add_option("query", eo.query, "Words of the name")->required();
  en_search->add_option("--limit", eo.limit, "Results at most")->capture_default_str()->check(CLI::Range(1, 1000));
  en_show->add_option("name", eo.query, "The entity's name or alias")->required();
  en_export->add_option("--format", eo.format, "jsonl or mermaid")->capture_default_str()->check(
      CLI::IsMember({"jsonl", "mermaid"}));

  auto* kg = app.add_subcommand("kg", "Knowledge bundles (JSON Schema entity types)");
  kg->require_subcommand(1);
  auto* kg_bowtie = kg->add_subcommand(
      "bowtie", "Serve the Bowtie harness protocol (JSON lines on stdin/stdout) with Engram's JSON Schema validator");

  auto* kg_validate = kg->add_subcommand(
      "validate", "Check a bundle directory locally (manifest, schemas, entities, references); every problem, one a line");
  std::string bundle_dir;
  kg_validate->add_option("bundle", bundle_dir, "The bundle's directory (manifest.yaml at its root)")->required();
  engram::ctl::kg_options ko;
  auto* kg_apply = kg->add_subcommand(
      "apply", "Check a bundle locally, write it to engram-log and wait until engramd has made it visible");
  auto* kg_delete = kg->add_subcommand("delete", "Delete a bundle (and its tools) of an organisation");
  auto* kg_list = kg->add_subcommand("list", "The organisation's bundles, from engramd");
  auto* kg_show = kg->add_subcommand("show", "One bundle: its types, tools, counts and last apply (JSON), from engramd");
  std::int64_t kg_timeout = 120;
  for (auto* sc : {kg_apply, kg_delete, kg_list, kg_show}) {
    sc->add_option("--organization", ko.organization, "organizationId")->required();
    sc->add_option("--config", ko.config_path, "engramd's YAML configuration (brokers, topics, http.listen, auth.tokens)")
        ->capture_default_str();
    sc->add_option("--set", ko.overrides, "Override a config key (repeatable), as for engramd");
    sc->add_option("--token", ko.token, "A bearer token of the organisation (default: the config's first for it)");
    sc->add_option("--url", ko.url, "engramd's base URL (default: http://<http.listen>)");
  }
  kg_apply->add_option("bundle", ko.bundle, "The bundle's directory (manifest.yaml at its root)")->required();
  kg_delete->add_option("name", ko.bundle, "The bundle's name")->required();
  kg_show->add_option("name", ko.bundle, "The bundle's name")->required();
  for (auto* sc : {kg_apply, kg_delete})
    sc->add_option("--timeout", kg_timeout, "Seconds to wait for engramd to apply it")->capture_default_str()->check(
        CLI::Range(1, 86400));

  CLI11_PARSE(app, argc, argv);
  if (*kg_bowtie)
    return engram::kg::bowtie_harness(std::cin, std::cout);
  if (*kg_validate)
    return kg_validate_bundle(bundle_dir);
  ko.timeout = std::chrono::seconds(kg_timeout);
  if (*kg_apply)
    return engram::ctl::kg_apply(ko, std::cout, std::cerr);
  if (*kg_delete)
    return engram::ctl::kg_delete(ko, std::cout, std::cerr);
  if (*kg_list)
    return engram::ctl::kg_list(ko, std::cout, std::cerr);
  if (*kg_show)
    return engram::ctl::kg_show(ko, std::cout, std::cerr);
  if (*en_search)
    return engram::ctl::entities_search(eo, std::cout, std::cerr);
  if (*en_show)
    return engram::ctl::entities_show(eo, std::cout, std::cerr);
  if (*en_export)
    return engram::ctl::entities_export(eo, std::cout, std::cerr);
  if (*rp)
    return replay(replay_config, replay_overrides, replay_into, replay_re_extract, replay_accept_partial);
  if (*db)
    return devbroker(partitions, bootstrap_file, topics);
  if (*pr)
    return produce(brokers, topic, file, max_bytes);
  if (*dg)
    return digest(data_dir, dump);
  if (*ex)
    return extract(extract_file, threshold, explain, extract_bulk, no_type_model ? std::string() : extract_model);
  if (*idocs)
    return engram::ctl::ingest_docs(ido, std::cout, std::cerr);
  if (*kag_status)
    return engram::ctl::kag_status(kago, std::cout, std::cerr);
  if (*kag_query)
    return engram::ctl::kag_query(kago, std::cout, std::cerr);
  if (*im) {
    if (import_brokers.empty() && import_output.empty()) {
      std::cerr << "import: give --brokers ADDR (produce) or --output FILE (JSONL)\n";
      return 2;
    }
    return import(import_brokers, import_output, organization, import_topic, import_paths);
  }
  return stats(url);
}
