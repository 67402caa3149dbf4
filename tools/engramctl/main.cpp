// engramctl: operations and development commands for Engram.
//   devbroker    a standalone Kafka mock cluster (librdkafka), for tests and local runs (devbroker.hpp)
//   produce      validate a JSONL file of inbound events and produce it (key = organizationId) (events.hpp)
//   digest       a stable hash of a store's logical content (inspect.hpp)
//   extract      what extraction reads from inbound events, without broker or store (extract.hpp)
//   import       e-mail files (.eml, mbox, maildir) to inbound events (events.hpp)
//   ingest-docs  text, Markdown, HTML and PDF documents to inbound events (docs.hpp)
//   kag          graph queries over what mail and documents gave (docs.hpp)
//   stats        engramd's /v1/stats (inspect.hpp)
//   cluster      which clustered store member owns which engram-log partition (inspect.hpp)
//   forget       forget an entry, messages, a contact or the organisation, through engramd (forget.hpp)
//   audit        the organisation's forgets: who, when, what kind (forget.hpp)
//   replay       rebuild the graph from engram-log into a new store, then print its digest
//                (--re-extract: read every message again with today's extractor and encoder) (replay.hpp)
//   entities     search, show or export an organisation's entity graph (entities.hpp)
//   kg           knowledge bundles: validate, apply, delete, list, show (kg.hpp); the Bowtie harness
// This file is the command line alone: each command's flags, then the call of its implementation.
#include "kg/bowtie.hpp"
#include "tools/engramctl/devbroker.hpp"
#include "tools/engramctl/docs.hpp"
#include "tools/engramctl/entities.hpp"
#include "tools/engramctl/events.hpp"
#include "tools/engramctl/extract.hpp"
#include "tools/engramctl/forget.hpp"
#include "tools/engramctl/inspect.hpp"
#include "tools/engramctl/kg.hpp"
#include "tools/engramctl/replay.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <cstdlib>
#include <string>

namespace {

namespace ctl = engram::ctl;

/// Every command's options, bound to its flags.
struct cli_options {
  ctl::devbroker_options devbroker;
  ctl::produce_options produce;
  std::string digest_dir;
  bool digest_dump = false;
  std::string digest_organization;
  bool digest_by_organization = false;
  ctl::extract_options extract;
  ctl::import_options mail;
  ctl::ingest_options docs;
  ctl::kag_options kag;
  std::string stats_url = "http://127.0.0.1:8700";
  /// Bearer token for stats and cluster (default: $ENGRAM_TOKEN).
  std::string stats_token;
  bool cluster_json = false;
  ctl::replay_options replay;
  ctl::entities_options entities;
  std::string bundle_dir;
  ctl::kg_options kg;
  std::int64_t kg_timeout = 120;
  ctl::forget_options forget;
};

/// The commands, to see which one was given.
struct cli_commands {
  CLI::App *devbroker = nullptr, *produce = nullptr, *digest = nullptr, *extract = nullptr, *mail = nullptr,
           *ingest_docs = nullptr, *kag_status = nullptr, *kag_query = nullptr, *stats = nullptr, *replay = nullptr,
           *cluster = nullptr;
  CLI::App *en_search = nullptr, *en_show = nullptr, *en_export = nullptr;
  CLI::App *kg_bowtie = nullptr, *kg_validate = nullptr, *kg_apply = nullptr, *kg_delete = nullptr, *kg_list = nullptr,
           *kg_show = nullptr;
  CLI::App *forget = nullptr, *audit = nullptr;
};

void add_devbroker_and_produce(CLI::App& app, cli_options& o, cli_commands& c) {
  c.devbroker = app.add_subcommand("devbroker", "Run a standalone Kafka mock cluster until SIGTERM");
  c.devbroker->add_option("--partitions", o.devbroker.partitions, "Partitions per topic")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  c.devbroker->add_option("--bootstrap-file", o.devbroker.bootstrap_file, "Write the bootstrap address to this file");
  c.devbroker->add_option("--topics", o.devbroker.topics, "Topics to create")->capture_default_str()->delimiter(',');

  c.produce = app.add_subcommand("produce", "Validate inbound events (JSONL) and produce them, key = organizationId");
  c.produce->add_option("--brokers", o.produce.brokers, "Bootstrap servers")->required();
  c.produce->add_option("--topic", o.produce.topic, "Topic")->capture_default_str();
  c.produce->add_option("--max-event-bytes", o.produce.max_bytes, "Refuse larger events")->capture_default_str();
  c.produce->add_option("file", o.produce.file, "JSONL file, or - for stdin")->required();
}

void add_digest_and_extract(CLI::App& app, cli_options& o, cli_commands& c) {
  c.digest = app.add_subcommand("digest", "Print the hash of a store's logical content");
  c.digest->add_option("--data-dir", o.digest_dir, "The store's directory (storage.path)")->required();
  c.digest->add_flag("--dump", o.digest_dump,
                     "First print what the digest hashes, one key a line (column family, key, value; tab-separated, "
                     "bytes outside printable ASCII as \\xNN): diff two dumps to see where two stores differ");
  c.digest->add_option("--organization", o.digest_organization,
                       "Only this organisation's content (equal on any store that applied its records, whatever "
                       "else it holds: a cluster member's and a replay's)");
  c.digest
      ->add_flag("--by-organization", o.digest_by_organization,
                 "One line per organisation the store holds, sorted: its id, a tab, its digest")
      ->excludes(c.digest->get_option("--organization"));

  auto* ex = c.extract =
      app.add_subcommand("extract", "Print what extraction reads from inbound events (JSONL), one JSON line each");
  ex->add_option("file", o.extract.file, "JSONL file, or - for stdin")->capture_default_str();
  ex->add_option("--confidence-threshold", o.extract.threshold, "Drop entries below")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  ex->add_flag("--explain", o.extract.explain, "Also print the cleaned text and its sentences");
  ex->add_option("--bulk", o.extract.bulk, "Bulk and spam mail: skip, low_confidence or keep (extraction.bulk)")
      ->capture_default_str()
      ->check(CLI::IsMember({"skip", "low_confidence", "keep"}));
  ex->add_option("--model", o.extract.model_path,
                 "The USE Lite weights the entry-type model reads with (embedder.model_path)")
      ->capture_default_str();
  ex->add_flag("--no-type-model", o.extract.no_type_model, "Types from the cues alone (extraction.type_model: false)");
}

void add_import_and_ingest_docs(CLI::App& app, cli_options& o, cli_commands& c) {
  auto* im = c.mail = app.add_subcommand("import", "Read .eml, mbox and maildir and produce inbound events");
  auto* ib = im->add_option("--brokers", o.mail.brokers, "Bootstrap servers to produce to");
  auto* io = im->add_option("--output", o.mail.output, "Write JSONL here instead of producing");
  ib->excludes(io);
  im->add_option("--organization", o.mail.organization, "organizationId of every event")->required();
  im->add_option("--topic", o.mail.topic, "Topic")->capture_default_str();
  im->add_option("paths", o.mail.paths, "Files and folders")->required();

  auto* idocs = c.ingest_docs =
      app.add_subcommand("ingest-docs",
                         "Read text, Markdown, HTML and PDF documents and produce their chunks as inbound events "
                         "(sourceType file)");
  auto* idb = idocs->add_option("--brokers", o.docs.brokers, "Bootstrap servers to produce to");
  auto* ido_out = idocs->add_option("--output", o.docs.output, "Write JSONL here instead of producing");
  idb->excludes(ido_out);
  idocs->add_option("--organization", o.docs.organization, "organizationId of every event")->required();
  idocs->add_option("--topic", o.docs.topic, "Topic")->capture_default_str();
  idocs->add_option("--sent-at", o.docs.sent_at,
                    "sentAt of every event (RFC 3339; default: each file's modification time)");
  idocs->add_option("--chunk-chars", o.docs.chunk_chars, "Bytes of text a chunk holds at most")->capture_default_str();
  idocs->add_option("paths", o.docs.paths, "Files and folders (.txt, .md, .markdown, .html, .htm, .pdf)")->required();
}

void add_kag(CLI::App& app, cli_options& o, cli_commands& c) {
  auto* kag = app.add_subcommand("kag",
                                 "Graph queries over the relations read from mail and documents (store opened "
                                 "read-only)");
  kag->require_subcommand(1);
  c.kag_status = kag->add_subcommand("status", "Each document's chunks applied and pending, and what they gave");
  c.kag_status->add_option("--data-dir", o.kag.data_dir, "The store's directory (storage.path)")->required();
  c.kag_status->add_option("--organization", o.kag.organization, "Only this organisation");
  auto* q = c.kag_query =
      kag->add_subcommand("query", "kag_query's Markdown context for a question (--json: the whole answer)");
  q->add_option("--data-dir", o.kag.data_dir, "The store's directory (storage.path)")->required();
  q->add_option("--organization", o.kag.organization, "The organisation")->required();
  q->add_option("--max-hops", o.kag.max_hops, "Hops of the walk (0..3)")->capture_default_str();
  q->add_option("--limit", o.kag.limit, "Entities at most (1..100)")->capture_default_str();
  q->add_flag("--json", o.kag.json, "Print the whole answer as JSON");
  q->add_option("query", o.kag.query, "The question")->required();
}

void add_forget_and_audit(CLI::App& app, cli_options& o, cli_commands& c) {
  c.forget = app.add_subcommand("forget",
                                "Forget an entry, a message, a thread, a document, a contact or the whole organisation "
                                "(forget_knowledge), for good");
  c.audit = app.add_subcommand("audit", "List the organisation's forgets: who, when, what kind (the admin scope)");
  for (auto* sc : {c.forget, c.audit}) {
    sc->add_option("--url", o.forget.url, "engramd's base URL")->capture_default_str();
    sc->add_option("--token", o.forget.token, "A bearer token of the organisation (default: $ENGRAM_TOKEN)");
  }
  c.forget->add_option("--kind", o.forget.kind, "What to forget")
      ->required()
      ->check(CLI::IsMember({"entry", "message", "thread", "document", "contact", "organization"}));
  c.forget->add_option("--id", o.forget.id,
                       "The entry's id, the message's eventId, the threadId, the documentId, or the contact's "
                       "contactId or e-mail address (the organisation: the token's own)");
}

void add_stats_and_replay(CLI::App& app, cli_options& o, cli_commands& c) {
  c.stats = app.add_subcommand("stats", "Print engramd's /v1/stats");
  c.stats->add_option("--url", o.stats_url, "engramd's base URL")->capture_default_str();
  c.stats->add_option("--token", o.stats_token,
                      "A bearer token: its organisation's rows (every organisation's with the admin scope); "
                      "default: $ENGRAM_TOKEN");
  c.cluster = app.add_subcommand(
      "cluster", "Print which clustered store member (store.cluster) owns each engram-log partition, as one sees it");
  c.cluster->add_option("--url", o.stats_url, "Any member's base URL")->capture_default_str();
  c.cluster->add_option("--token", o.stats_token, "A token with the admin scope; default: $ENGRAM_TOKEN");
  c.cluster->add_flag("--json", o.cluster_json, "Print GET /v1/cluster as it is");

  auto* rp = c.replay =
      app.add_subcommand("replay", "Rebuild the graph from engram-log into a new store and print its digest");
  rp->add_option("--config", o.replay.config_path, "engramd's YAML configuration")->capture_default_str();
  rp->add_option("--set", o.replay.overrides, "Override a config key (repeatable), as for engramd");
  rp->add_option("--into", o.replay.into, "The new store's directory (new or empty)")->required();
  rp->add_flag("--accept-partial", o.replay.accept_partial,
               "Rebuild even when records were deleted from engram-log (retention, a full test broker): from what is "
               "left, naming what is missing; without it such a replay fails");
  rp->add_flag("--re-extract", o.replay.re_extract,
               "Read every logged message again with today's extractor and encoder instead of applying what the "
               "log says was read (for upgrades of the rules or the model; a new digest)");
}

void add_entities(CLI::App& app, cli_options& o, cli_commands& c) {
  auto* en = app.add_subcommand("entities",
                                "Search, show or export an organisation's entity graph (store opened "
                                "read-only)");
  en->require_subcommand(1);
  c.en_search = en->add_subcommand("search", "Fuzzy search over names and aliases, best first (JSON lines)");
  c.en_show = en->add_subcommand("show", "One entity with its attributes, observations and relations (JSON)");
  c.en_export = en->add_subcommand(
      "export", "Every entity and relation: JSON Lines in the reference memory server's file format, or Mermaid");
  for (auto* sc : {c.en_search, c.en_show, c.en_export}) {
    sc->add_option("--data-dir", o.entities.data_dir, "The store's directory (storage.path)")->required();
    sc->add_option("--organization", o.entities.organization, "organizationId")->required();
  }
  c.en_search->add_option("query", o.entities.query, "Words of the name")->required();
  c.en_search->add_option("--limit", o.entities.limit, "Results at most")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  c.en_show->add_option("name", o.entities.query, "The entity's name or alias")->required();
  c.en_export->add_option("--format", o.entities.format, "jsonl or mermaid")
      ->capture_default_str()
      ->check(CLI::IsMember({"jsonl", "mermaid"}));
}

void add_kg(CLI::App& app, cli_options& o, cli_commands& c) {
  auto* kg = app.add_subcommand("kg", "Knowledge bundles (JSON Schema entity types)");
  kg->require_subcommand(1);
  c.kg_bowtie = kg->add_subcommand(
      "bowtie", "Serve the Bowtie harness protocol (JSON lines on stdin/stdout) with Engram's JSON Schema validator");
  c.kg_validate = kg->add_subcommand(
      "validate",
      "Check a bundle directory locally (manifest, schemas, entities, references); every problem, one a line");
  c.kg_validate->add_option("bundle", o.bundle_dir, "The bundle's directory (manifest.yaml at its root)")->required();
  c.kg_apply = kg->add_subcommand(
      "apply", "Check a bundle locally, write it to engram-log and wait until engramd has made it visible");
  c.kg_delete = kg->add_subcommand("delete", "Delete a bundle (and its tools) of an organisation");
  c.kg_list = kg->add_subcommand("list", "The organisation's bundles, from engramd");
  c.kg_show = kg->add_subcommand("show", "One bundle: its types, tools, counts and last apply (JSON), from engramd");
  for (auto* sc : {c.kg_apply, c.kg_delete, c.kg_list, c.kg_show}) {
    sc->add_option("--organization", o.kg.organization, "organizationId")->required();
    sc->add_option("--config", o.kg.config_path,
                   "engramd's YAML configuration (brokers, topics, http.listen, auth.tokens)")
        ->capture_default_str();
    sc->add_option("--set", o.kg.overrides, "Override a config key (repeatable), as for engramd");
    sc->add_option("--token", o.kg.token, "A bearer token of the organisation (default: the config's first for it)");
    sc->add_option("--url", o.kg.url, "engramd's base URL (default: http://<http.listen>)");
  }
  c.kg_apply->add_option("bundle", o.kg.bundle, "The bundle's directory (manifest.yaml at its root)")->required();
  c.kg_delete->add_option("name", o.kg.bundle, "The bundle's name")->required();
  c.kg_show->add_option("name", o.kg.bundle, "The bundle's name")->required();
  for (auto* sc : {c.kg_apply, c.kg_delete})
    sc->add_option("--timeout", o.kg_timeout, "Seconds to wait for engramd to apply it")
        ->capture_default_str()
        ->check(CLI::Range(1, 86400));
}

/// Runs the command that was given; its exit status.
int run(const cli_commands& c, cli_options& o) {
  auto& out = std::cout;
  auto& err = std::cerr;
  if (*c.kg_bowtie)
    return engram::kg::bowtie_harness(std::cin, out);
  if (*c.kg_validate)
    return ctl::kg_validate(o.bundle_dir, out, err);
  o.kg.timeout = std::chrono::seconds(o.kg_timeout);
  if (*c.kg_apply)
    return ctl::kg_apply(o.kg, out, err);
  if (*c.kg_delete)
    return ctl::kg_delete(o.kg, out, err);
  if (*c.kg_list)
    return ctl::kg_list(o.kg, out, err);
  if (*c.kg_show)
    return ctl::kg_show(o.kg, out, err);
  if (*c.en_search)
    return ctl::entities_search(o.entities, out, err);
  if (*c.en_show)
    return ctl::entities_show(o.entities, out, err);
  if (*c.en_export)
    return ctl::entities_export(o.entities, out, err);
  if (*c.replay)
    return ctl::replay(o.replay);
  if (*c.devbroker)
    return ctl::devbroker(o.devbroker);
  if (*c.produce)
    return ctl::produce(o.produce);
  if (*c.digest)
    return ctl::digest(o.digest_dir, o.digest_dump, o.digest_organization, o.digest_by_organization);
  if (*c.extract)
    return ctl::extract(o.extract);
  if (*c.ingest_docs)
    return ctl::ingest_docs(o.docs, out, err);
  if (*c.kag_status)
    return ctl::kag_status(o.kag, out, err);
  if (*c.kag_query)
    return ctl::kag_query(o.kag, out, err);
  if (*c.mail)
    return ctl::import_mail(o.mail);
  if (*c.forget || *c.audit) {
    if (o.forget.token.empty())
      if (const char* t = std::getenv("ENGRAM_TOKEN"))
        o.forget.token = t;
    return *c.forget ? ctl::forget(o.forget, out, err) : ctl::audit(o.forget, out, err);
  }
  if (o.stats_token.empty())
    if (const char* t = std::getenv("ENGRAM_TOKEN"))
      o.stats_token = t;
  if (*c.cluster)
    return ctl::cluster(o.stats_url, o.stats_token, o.cluster_json, out);
  return ctl::stats(o.stats_url, o.stats_token);
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  CLI::App app{"engramctl: operate Engram"};
  app.require_subcommand(1);
  cli_options o;
  cli_commands c;
  add_devbroker_and_produce(app, o, c);
  add_digest_and_extract(app, o, c);
  add_import_and_ingest_docs(app, o, c);
  add_kag(app, o, c);
  add_stats_and_replay(app, o, c);
  add_forget_and_audit(app, o, c);
  add_entities(app, o, c);
  add_kg(app, o, c);
  CLI11_PARSE(app, argc, argv);
  return run(c, o);
}
