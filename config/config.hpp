#pragma once
// Engram's configuration: plain structs with their defaults, loaded once by engramd
// from YAML (config/engram.yaml) plus overrides, validated, then handed to constructors.
// This module depends on no other module of the project.

#include <cstdint>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace engram::config {

/// Kafka topic names. Other programs depend on the defaults (docs/architecture.md).
struct topics_config {
  /// Upstream topic the bus writes messages to. Default: "inbound-messages".
  std::string inbound = "inbound-messages";
  /// Engram's log of record; the store is built from this topic alone. Default: "engram-log".
  std::string log = "engram-log";
  /// Action-item reminders (a later issue). Default: "engram-reminders".
  std::string reminders = "engram-reminders";
  /// Poison events, with the original bytes and a `reason` header. Default: "engram-dlq".
  std::string dead_letter = "engram-dlq";
};

struct kafka_config {
  /// Bootstrap servers, or "embedded" to start librdkafka's mock cluster inside engramd.
  /// Default: "embedded".
  std::string brokers = "embedded";
  /// Consumer group of the engram-log pipeline; the sequencer uses `<group_id>-sequencer`.
  /// Default: "engram".
  std::string group_id = "engram";
  /// librdkafka properties passed through unchanged to every client. Default: none.
  std::map<std::string, std::string> rdkafka;
  topics_config topics;
  /// On a real broker, engramd refuses to start unless the log topic keeps every record
  /// (retention.ms and retention.bytes -1, cleanup.policy delete), and warns when the inbound
  /// topic keeps records for less than this. 0: no warning. Default: 604,800,000 (7 days).
  std::uint64_t min_inbound_retention_ms = 604800000;
  /// True when `brokers` asks for the in-process mock cluster.
  [[nodiscard]] bool embedded() const { return brokers == "embedded"; }
};

struct storage_config {
  /// RocksDB directory. Default: "./data/engram".
  std::string path = "./data/engram";
};

struct http_config {
  /// Address the HTTP server binds, "host:port". Default: "127.0.0.1:8700" (loopback only).
  std::string listen = "127.0.0.1:8700";
};

struct samples_config {
  /// Produce the demo stream into the inbound topic at start. Default: true (the embedded default).
  bool load = true;
  /// JSONL file of inbound events, relative to the working directory.
  /// Default: "tools/samples/demo-stream.jsonl".
  std::string path = "tools/samples/demo-stream.jsonl";
};

struct ingest_config {
  /// Larger inbound events go to the dead-letter topic. Default: 1 MiB.
  std::uint64_t max_event_bytes = 1048576;
  /// Most records the engram-log consumer hands to the pipeline at once (and the most
  /// inbound messages the extract stage takes at once). Default: 500.
  std::uint32_t batch_size = 500;
  /// Threads the extract stage reads messages on (each message on one; order kept).
  /// 0: one per core. Default: 0.
  std::uint32_t extract_threads = 0;
  /// The extract stage commits what it appended at least this often within a large batch
  /// (and stops between chunks of 32 messages on SIGTERM). Default: 1,000 ms.
  std::uint32_t batch_ms = 1000;
  /// Partitions whose lost records an operator accepts, as "topic:partition" (e.g.
  /// "engram-log:3"). When records a partition still needs were deleted from the broker
  /// (retention, a full test broker), engramd stops reading that partition and is not ready;
  /// a partition named here instead resumes at the oldest record left, and the gap is recorded
  /// in the store and shown in /v1/stats. Default: none (a gap is never jumped by default).
  std::vector<std::string> accept_gaps;
  /// True when `accept_gaps` names this partition of `topic`.
  [[nodiscard]] bool accepts_gap(const std::string& topic, std::int32_t partition) const;
};

/// What this engramd process does (docs/architecture.md). `extract`: reads inbound-messages,
/// extracts and embeds, appends to engram-log (the sequencer). `store`: consumes
/// engram-log and applies it to the store, and serves MCP and the timers. Several
/// `extract` processes may share the inbound partitions (one consumer group); each store
/// stays the single writer of its data. Default: both.
struct roles_config {
  bool extract = true;
  bool store = true;
};

struct extraction_config {
  /// Entries read with less confidence are dropped (and counted in /metrics). Default: 0.6.
  double confidence_threshold = 0.6;
  /// Entries kept per message at most, its first ones; the message itself is stored whole.
  /// 0: no bound. Default: 200.
  std::uint32_t max_entries_per_message = 200;
  /// Newsletters, list traffic, notifications and spam (extractor/bulk.hpp): "skip" (nothing
  /// read from them), "low_confidence" (read, with half the confidence) or "keep". Default: skip.
  std::string bulk = "skip";
  /// The entry-type model (extractor/type_model.hpp) weighs in on the cues' types and reads
  /// sentences the cues left untyped; it runs the int8 USE Lite encoder (embedder.model_path).
  /// false: the cues alone. Default: true.
  bool type_model = true;
  /// Person messages are also kept as passages (docs/recall.md): recall never loses what was
  /// said. false: entries only (smaller records and store). Default: true.
  bool passages = true;
};

struct llm_config {
  /// OpenAI-compatible API base URL. Default: "http://127.0.0.1:11434/v1" (a local Ollama).
  std::string base_url = "http://127.0.0.1:11434/v1";
  /// Default: "llama3.1".
  std::string model = "llama3.1";
  /// Bearer token for the endpoint; never logged. Default: none.
  std::string api_key;
  /// Default: 20,000 ms; a slower answer falls back to the rules.
  std::uint32_t timeout_ms = 20000;
};

struct extractor_config {
  /// "rules" (deterministic, the default) or "llm" (falls back to the rules per message).
  std::string kind = "rules";
  llm_config llm;
};

struct openai_embedder_config {
  /// OpenAI-compatible endpoint (…/v1); /embeddings is appended. Default: none.
  std::string base_url;
  std::string model;
  /// Bearer token; never logged. Default: none.
  std::string api_key;
  /// Dimension of the endpoint's vectors (required with kind openai).
  std::uint32_t dimension = 0;
  /// Default: 10,000 ms.
  std::uint32_t timeout_ms = 10000;
};

struct embedder_config {
  /// use-lite-int8 (in-process Universal Sentence Encoder Lite in integers: the same bits on
  /// every CPU; the default), use-lite (the float32 reference encoder) or openai.
  std::string kind = "use-lite-int8";
  /// The int8 encoder's vector-unit path: auto (the widest the CPU has), avx512, avx2 or
  /// portable. Every path gives the same bits; a path the CPU lacks is refused at start.
  std::string isa = "auto";
  /// The converted USE Lite weights (tools/dev.sh setup writes them). Default:
  /// .cache/models/use-lite-en.bin (relative to the working directory).
  std::string model_path = ".cache/models/use-lite-en.bin";
  /// Vectors of the most recent distinct texts kept (2 KiB each at 512-d); 0 turns the
  /// cache off. Default: 20,000.
  std::uint32_t cache_size = 20000;
  /// Entries of one message embedded at most (its first ones; the rest are stored without
  /// a vector and deduplicated by exact title): a huge mail costs the encoder a bounded
  /// time. Each sentence is read up to 128 tokens (the model's). 0: no bound. Default: 64.
  std::uint32_t max_per_message = 64;
  openai_embedder_config openai;
};

struct dedup_config {
  /// Cosine above which two statements may be duplicates (the structure must agree too).
  /// Default: 0.92.
  double threshold = 0.92;
};

struct token_config {
  /// The bearer token; never logged.
  std::string token;
  std::string organization_id;
  /// Any of read, write, admin.
  std::vector<std::string> scopes;
  /// Who saves with it (recorded as the author of saved knowledge). Default: "agent".
  std::string name = "agent";
  /// The knowledge bundles of its organisation it is bound to: only these bundles' tools
  /// (list_<type>, get_<type>, ...) and prompts are shown to it. Default: none.
  std::vector<std::string> bundles;
};

struct auth_config {
  /// Tokens and the one organisation each may see. Default: none (a dev token is made at
  /// first start, see engine).
  std::vector<token_config> tokens;
  /// Serves requests without a token as this organisation (read, write); only allowed when
  /// http.listen is a loopback address. Default: off.
  std::string anonymous_organization;
  /// The organisation of the dev token generated when no tokens are configured. Default: acme.
  std::string dev_organization = "acme";
};

/// The modules whose log level can be set on its own (log.levels), in logging::module order.
inline constexpr std::array<std::string_view, 9> log_modules{"engine", "ingest", "sequencer", "extractor", "store",
                                                             "mcp",    "http",   "timers",    "kafka"};

struct log_config {
  /// spdlog level: trace, debug, info, warn, error, off. Default: "info".
  std::string level = "info";
  /// "text" (a human-readable line: time, module, level, message) or "json" (one object per
  /// line: time, level, module, thread, message). Default: "text".
  std::string format = "text";
  /// A level per module (one of log_modules; "kafka" is librdkafka's own log), e.g.
  /// {ingest: debug, mcp: warn}; the others
  /// use `level`. Default: none.
  std::map<std::string, std::string> levels;
};

/// The whole configuration of engramd.
struct decay_config {
  /// Half-life in days per entry type (fact, decision, event, preference, goal,
  /// relationship, action_item); 0 = no decay. effectiveConfidence = confidence ×
  /// 0.5^(days since lastValidatedAt / half-life), evaluated at read time.
  std::array<double, 7> half_life_days{180, 730, 0, 90, 30, 120, 14};
  /// Below this effective confidence an entry leaves recall (it stays readable by id).
  double hide_below = 0.1;
};

struct recall_config {
  /// Hybrid recall (issue 19): entries that mention the entities a query names, then those
  /// of their neighbours in the entity graph, join recall's fusion as a third ranked list.
  /// Default: false (not yet measured on a multi-hop question set).
  bool graph_expansion = false;
};

struct branches_config {
  /// A branch without a save for this long is abandoned: its saves vanish.
  std::uint64_t ttl_ms = 24ull * 3600 * 1000;
};

struct reminders_config {
  /// How long before an action item's dueAt its reminder goes out.
  std::uint64_t lead_ms = 24ull * 3600 * 1000;
  /// Most reminders one timers round sends (the rest go in the next rounds). Default: 1000.
  std::uint32_t batch = 1000;
};

struct timers_config {
  /// How often the timers look for expired entries, abandoned branches and due reminders.
  std::uint64_t interval_ms = 60000;
  /// Most entries one expiry sweep removes (a small batch: ingestion never waits long).
  std::uint32_t expiry_batch = 100;
};

struct entities_config {
  /// An entity type's parent type (type names as agents give them; compared as lower snake
  /// case), e.g. {saas_company: company}: a query for a type also finds its subtypes, with
  /// confidence 0.8 per level. Default: none.
  std::map<std::string, std::string> type_parents;
};

struct engram_config {
  roles_config roles;
  kafka_config kafka;
  storage_config storage;
  http_config http;
  samples_config samples;
  ingest_config ingest;
  extraction_config extraction;
  extractor_config extractor;
  embedder_config embedder;
  dedup_config dedup;
  auth_config auth;
  log_config log;
  decay_config decay;
  recall_config recall;
  branches_config branches;
  reminders_config reminders;
  timers_config timers;
  entities_config entities;
};

/// What load() found: the configuration, or the first error; warnings either way.
struct load_result {
  engram_config config;
  /// Empty on success; otherwise names the key (or file) and the reason.
  std::string error;
  /// Accepted keys whose feature has not landed yet, and other non-fatal notes.
  std::vector<std::string> warnings;
  [[nodiscard]] bool ok() const { return error.empty(); }
};

/// Loads `path` (YAML), then applies `ENGRAM_A__B=c` variables from `env` (a
/// null-terminated environ array, may be null; variables without "__" are not config), then `overrides` ("a.b=c", later wins).
/// Values of overrides are parsed as YAML scalars or flow collections. An unknown key is
/// an error that names it. Never throws.
[[nodiscard]] load_result load(const std::string& path, const std::vector<std::string>& overrides,
                               char** env);

/// Checks cross-field rules; returns the first problem found, or an empty string.
[[nodiscard]] std::string validate(const engram_config& cfg);

}  // namespace engram::config
