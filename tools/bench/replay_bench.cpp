// engram-log replayed from a file of records at the size users reach (replay_bench.hpp).

#include "tools/bench/replay_bench.hpp"
#include "actors/store/store_writer.hpp"
#include "contradiction/contradiction.hpp"
#include "dedup/dedup.hpp"
#include "embedding/embedder.hpp"
#include "evaluation/synthetic.hpp"
#include "reading/read.hpp"
#include "schemas/log_record.hpp"
#include "storage/graph_store.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/bench/pipeline_bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unistd.h>

namespace engram::bench {
namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;
using json = nlohmann::json;

/// Dense mail gives at least 3 entries a message once dedup has merged what repeats (about 5
/// in the builds here): messages enough for the target at 3 are made, and the build stops
/// once the store holds the target.
constexpr std::size_t entries_per_message = 3;

/// The records file: this line, then each record as its partition (i32), its offset (i64),
/// its kind header and its JSON value (each a u32 byte count, then the bytes); numbers in
/// this machine's byte order. A file is complete once `replay-bench.json` beside it says so
/// ("complete"); before, its "bytes" are what the last checkpoint flushed.
constexpr std::string_view file_magic = "engram-log records 1\n";

struct file_record {
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::string kind, value;
};

class record_writer {
public:
  /// A new file at `path`; with `keep` bytes, the first `keep` bytes of the file there (a build
  /// that goes on), written on from their end.
  record_writer(const fs::path& path, std::uint64_t keep) {
    if (keep == 0) {
      out_.open(path, std::ios::binary | std::ios::trunc);
      out_.write(file_magic.data(), static_cast<std::streamsize>(file_magic.size()));
      bytes_ = file_magic.size();
    } else {
      fs::resize_file(path, keep);
      out_.open(path, std::ios::binary | std::ios::app);
      bytes_ = keep;
    }
  }
  void write(std::int32_t partition, std::int64_t offset, const schemas::encoded_record& r) {
    put(partition);
    put(offset);
    for (const auto* s : {&r.kind, &r.value}) {
      put(static_cast<std::uint32_t>(s->size()));
      out_.write(s->data(), static_cast<std::streamsize>(s->size()));
    }
    bytes_ += sizeof partition + sizeof offset + 8 + r.kind.size() + r.value.size();
  }
  /// Flushes; throws when a write failed (a full disk).
  void flush() {
    out_.flush();
    if (!out_)
      throw std::runtime_error("the records file could not be written");
  }
  /// The file's size once flushed.
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }

private:
  template <class T>
  void put(T v) {
    out_.write(reinterpret_cast<const char*>(&v), sizeof v);
  }
  std::ofstream out_;
  std::uint64_t bytes_ = 0;
};

class record_reader {
public:
  explicit record_reader(const fs::path& path) : in_(path, std::ios::binary) {
    std::string magic(file_magic.size(), '\0');
    in_.read(magic.data(), static_cast<std::streamsize>(magic.size()));
    if (!in_ || magic != file_magic)
      throw std::runtime_error(path.string() + ": not a records file of this version");
  }
  /// The next record; false at the end (a record cut short throws).
  bool next(file_record& r) {
    if (!get(r.partition))
      return false;
    if (!get(r.offset) || !text(r.kind) || !text(r.value))
      throw std::runtime_error("the records file ends inside a record");
    return true;
  }

private:
  template <class T>
  bool get(T& v) {
    return static_cast<bool>(in_.read(reinterpret_cast<char*>(&v), sizeof v));
  }
  bool text(std::string& s) {
    std::uint32_t n = 0;
    if (!get(n))
      return false;
    s.resize(n);
    return static_cast<bool>(in_.read(s.data(), n));
  }
  std::ifstream in_;
};

/// A store with dedup and contradiction, as the store stage holds them.
struct stage {
  std::shared_ptr<storage::graph_store> store;
  actors::resolver resolve;
};

stage open_stage(const fs::path& dir, std::size_t memory_mb, std::size_t dim) {
  stage s;
  storage::open_options so;
  so.path = dir.string();
  so.memory_mb = memory_mb;
  s.store = or_throw(storage::open_graph_store(so));
  dedup::dedup_options d;
  d.dim = dim;
  s.resolve.dedup = std::make_unique<dedup::deduplicator>(s.store, d);
  s.resolve.contradiction = std::make_unique<contradiction::contradiction_finder>(s.store, s.resolve.dedup->reader());
  (void)or_throw(s.resolve.dedup->open((dir / "vector-index").string()));
  return s;
}

/// A record of partition/offset, decoded from its kind and value as the log consumer decodes
/// one.
actors::log_record decoded(std::int32_t partition, std::int64_t offset, std::string_view kind, std::string_view value) {
  actors::log_record rec;
  rec.position = {"engram-log", partition, offset, "bench"};
  auto payload = schemas::decode_record(kind, value, schemas::decode_limits{});
  if (auto* bad = std::get_if<schemas::record_error>(&payload))
    throw std::runtime_error("record " + std::to_string(partition) + "/" + std::to_string(offset) +
                             " does not decode: " + bad->reason);
  rec.payload = std::move(std::get<schemas::log_payload>(payload));
  return rec;
}

void apply(stage& s, const actors::log_record& rec) {
  storage::apply_outcome out{};
  if (actors::resolve_and_apply(*s.store, &s.resolve, rec, &out) != storage::errc::ok)
    throw std::runtime_error("apply failed at " + std::to_string(rec.position.partition) + "/" +
                             std::to_string(rec.position.offset));
}

/// What the live build made, or how far it got: kept in replay-bench.json.
struct live_figures {
  /// Records written (one an event, in the events' order) and the entries they made.
  std::size_t records = 0, entries = 0;
  /// The file's size, and each partition's next offset in it.
  std::uint64_t bytes = 0;
  std::vector<std::int64_t> next_offset;
  double read_seconds = 0, store_seconds = 0;
  bool complete = false;
  std::string digest, commit;
};

json key_of(const replay_options& o) {
  return {
      {"entries", o.entries}, {"organisations", o.organisations}, {"memory_mb", o.memory_mb}, {"model", o.model_path}};
}

/// The organisations: "acme" alone, else org-0 … org-(n-1).
std::vector<std::string> organisations(std::size_t n) {
  if (n <= 1)
    return {"acme"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back("org-" + std::to_string(i));
  return out;
}

void write_kept(const fs::path& dir, const replay_options& o, const live_figures& f);

/// Reads dense mail for `o.entries` entries, writes each message's record to
/// `dir`/engram-log.records and applies it (decoded again, as engram-log gives it back) to
/// the live store in `dir`/live: organisation i on partition i. Every tenth of the target (at
/// least 10,000 entries) the file is flushed, the snapshots are written as engramd writes
/// them at a stop, and the progress is kept: a build stopped between two of them goes on
/// from the last, from `f` (the records its store applied since are written to the file
/// again, not applied again).
live_figures build_live(const replay_options& o, const fs::path& dir, live_figures f) {
  const auto live = dir / "live";
  if (f.records == 0)
    fs::remove_all(live);
  std::shared_ptr<const embedding::embedder> encoder = or_throw(embedding::use_lite_int8_embedder::load(o.model_path));
  auto s = open_stage(live, o.memory_mb, encoder->dim());
  reading::reader_context ctx{{}, encoder, nullptr};
  ctx.options.validator.passages = passages_used();
  const auto orgs = organisations(o.organisations);
  const auto events = evaluation::synthetic::dense_events(o.entries / entries_per_message + 100, orgs);
  std::map<std::string, std::int32_t> partition_of;
  for (std::size_t i = 0; i < orgs.size(); ++i)
    partition_of[orgs[i]] = static_cast<std::int32_t>(i);
  f.next_offset.resize(orgs.size(), 0);
  const auto applied = s.store->offsets("engram-log");
  record_writer out(dir / "engram-log.records", f.records == 0 ? 0 : f.bytes);
  constexpr std::size_t batch = 256;
  const std::size_t every = std::max<std::size_t>(10000, o.entries / 10);
  std::size_t checkpointed = f.entries;
  for (std::size_t at = f.records; at < events.size() && f.entries < o.entries; at += batch) {
    auto msgs = decode_events(events, at, at + batch);
    const auto read_from = clock_type::now();
    auto read = reading::read_messages(msgs, ctx, std::max(1u, std::thread::hardware_concurrency()));
    f.read_seconds += seconds_since(read_from);
    for (std::size_t i = 0; i < msgs.size(); ++i) {
      const auto p = partition_of.at(msgs[i].organization_id);
      const auto offset = f.next_offset[static_cast<std::size_t>(p)]++;
      const auto encoded =
          schemas::encode(schemas::extracted_message{std::move(msgs[i]), std::move(read[i]), encoder->name()});
      out.write(p, offset, encoded);
      ++f.records;
      if (auto a = applied.find(p); a != applied.end() && offset < a->second.next_offset)
        continue;  // applied before the build stopped
      const auto record = decoded(p, offset, encoded.kind, encoded.value);
      const auto store_from = clock_type::now();
      apply(s, record);
      f.store_seconds += seconds_since(store_from);
    }
    f.entries = entries_held(*s.store);
    if (f.entries >= checkpointed + every) {
      checkpointed = f.entries;
      out.flush();
      f.bytes = out.bytes();
      if (auto saved = s.resolve.dedup->save((live / "vector-index").string()); !saved)
        throw std::runtime_error(saved.error());
      if (auto saved = s.store->save_indexes(); !saved)
        throw std::runtime_error(saved.error());
      write_kept(dir, o, f);
      std::printf("  live: %zu records, %zu entries; reading %.0f s, store stage %.0f s\n", f.records, f.entries,
                  f.read_seconds, f.store_seconds);
      std::fflush(stdout);
    }
  }
  out.flush();
  f.bytes = out.bytes();
  f.digest = s.store->digest();
  f.complete = true;
  return f;
}

/// A queue of records from the reader to one applier; an empty optional ends it.
class record_queue {
public:
  void push(std::optional<actors::log_record> r) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return items_.size() < capacity; });
    items_.push_back(std::move(r));
    ready_.notify_one();
  }
  std::optional<actors::log_record> pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !items_.empty(); });
    auto r = std::move(items_.front());
    items_.pop_front();
    room_.notify_one();
    return r;
  }

private:
  static constexpr std::size_t capacity = 1024;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<std::optional<actors::log_record>> items_;
};

struct replay_run {
  unsigned appliers = 1;
  std::size_t records = 0, entries = 0;
  double seconds = 0;
  bool same_digest = false;
  /// Bytes of the candidates' facts dedup kept at the end.
  std::size_t facts_bytes = 0;
};

/// The file replayed into a new store at `dir` (removed after) by `appliers` applier threads.
replay_run replay_file(const replay_options& o, const fs::path& file, const fs::path& dir, std::size_t dim,
                       unsigned appliers, const std::string& live_digest) {
  fs::remove_all(dir);
  replay_run run;
  run.appliers = appliers;
  {
    auto s = open_stage(dir, o.memory_mb, dim);
    std::vector<record_queue> queues(appliers);
    std::vector<std::exception_ptr> failed(appliers);
    const auto t0 = clock_type::now();
    std::vector<std::thread> threads;
    for (unsigned a = 0; a < appliers; ++a)
      threads.emplace_back([&, a] {
        bool draining = false;  // after a failure: take what comes, apply nothing
        while (auto rec = queues[a].pop()) {
          if (draining)
            continue;
          try {
            apply(s, *rec);
          } catch (...) {
            failed[a] = std::current_exception();
            draining = true;
          }
        }
      });
    std::exception_ptr read_failed;
    try {
      record_reader in(file);
      file_record f;
      while (in.next(f)) {
        queues[static_cast<std::size_t>(f.partition) % appliers].push(decoded(f.partition, f.offset, f.kind, f.value));
        ++run.records;
      }
    } catch (...) {
      read_failed = std::current_exception();
    }
    for (auto& q : queues)
      q.push(std::nullopt);
    for (auto& t : threads)
      t.join();
    run.seconds = seconds_since(t0);
    for (const auto& e : failed)
      if (e)
        std::rethrow_exception(e);
    if (read_failed)
      std::rethrow_exception(read_failed);
    run.entries = entries_held(*s.store);
    run.same_digest = s.store->digest() == live_digest;
    run.facts_bytes = s.resolve.dedup->facts_bytes();
  }
  if (run.same_digest) {
    fs::remove_all(dir);
  } else {  // kept for engramctl digest --dump
    const auto kept = dir.string() + "-" + std::to_string(appliers) + "-differs";
    fs::remove_all(kept);
    fs::rename(dir, kept);
    std::printf("  (the replayed store that differs is kept in %s)\n", kept.c_str());
  }
  return run;
}

std::optional<live_figures> kept_live(const fs::path& dir, const replay_options& o) {
  std::ifstream in(dir / "replay-bench.json");
  if (!in)
    return std::nullopt;
  const auto j = json::parse(in, nullptr, false);
  if (j.is_discarded() || j.value("key", json()) != key_of(o))
    return std::nullopt;
  live_figures f;
  f.records = j.at("records").get<std::size_t>();
  f.entries = j.at("entries").get<std::size_t>();
  f.bytes = j.at("bytes").get<std::uint64_t>();
  f.read_seconds = j.at("read_seconds").get<double>();
  f.store_seconds = j.at("store_seconds").get<double>();
  f.next_offset = j.value("next_offset", std::vector<std::int64_t>{});
  f.complete = j.value("complete", true);
  f.digest = j.at("digest").get<std::string>();
  f.commit = j.value("commit", "");
  return f;
}

void write_kept(const fs::path& dir, const replay_options& o, const live_figures& f) {
  std::ofstream out(dir / "replay-bench.json.tmp");
  out << json{{"key", key_of(o)},
              {"records", f.records},
              {"entries", f.entries},
              {"bytes", f.bytes},
              {"read_seconds", f.read_seconds},
              {"store_seconds", f.store_seconds},
              {"next_offset", f.next_offset},
              {"complete", f.complete},
              {"digest", f.digest},
              {"commit", f.commit}}
             .dump()
      << "\n";
  out.close();
  fs::rename(dir / "replay-bench.json.tmp", dir / "replay-bench.json");
}

}  // namespace

int replay(const replay_options& o) {
  const bool keep = !o.dir.empty();
  const fs::path dir =
      keep ? fs::path(o.dir) : fs::temp_directory_path() / ("engram-bench-replay-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const char* commit = std::getenv("ENGRAM_COMMIT");  // set by tools/dev.sh bench
  std::printf(
      "replay: dense mail for %zu entries in %zu organisation(s), one a partition, storage.memory_mb %zu, %u "
      "cores, commit %s\n",
      o.entries, o.organisations, o.memory_mb, std::thread::hardware_concurrency(), commit ? commit : "unknown");
  auto live = kept_live(dir, o);
  if (live && live->complete) {
    std::printf("  (the records and live store kept in %s, made by commit %s: the live figures are that run's)\n",
                dir.c_str(), live->commit.c_str());
  } else {
    if (live) {
      std::printf("  (the build kept in %s stopped at %zu records, %zu entries: going on from there)\n", dir.c_str(),
                  live->records, live->entries);
    } else {
      fs::remove(dir / "replay-bench.json");
      live.emplace();
    }
    live->commit = commit ? commit : "";  // the last commit that built on it
    live = build_live(o, dir, *live);
    write_kept(dir, o, *live);
  }
  std::printf(
      "  live: %zu records (%.0f MiB in the file), %zu entries; reading %.0f s, the store stage (dedup, "
      "contradiction, apply; one thread) %.0f s = %.0f records/s, %.0f entries/s\n",
      live->records, double(live->bytes) / (1 << 20), live->entries, live->read_seconds, live->store_seconds,
      double(live->records) / std::max(live->store_seconds, 1e-9),
      double(live->entries) / std::max(live->store_seconds, 1e-9));
  std::fflush(stdout);
  const std::size_t dim = or_throw(embedding::use_lite_int8_embedder::load(o.model_path))->dim();
  bool all_same = true;
  for (const unsigned a : o.appliers) {
    const auto r = replay_file(o, dir / "engram-log.records", dir / "replayed", dim, std::max(1u, a), live->digest);
    all_same = all_same && r.same_digest;
    std::printf(
        "  replay from the file, %u applier(s): %zu records, %zu entries in %.1f s = %.0f records/s, %.0f "
        "entries/s; digest %s the live store's; dedup's facts kept %.1f MiB\n",
        r.appliers, r.records, r.entries, r.seconds, double(r.records) / std::max(r.seconds, 1e-9),
        double(r.entries) / std::max(r.seconds, 1e-9), r.same_digest ? "equal to" : "DIFFERENT from",
        double(r.facts_bytes) / (1024.0 * 1024.0));
    std::fflush(stdout);
  }
  if (!keep)
    fs::remove_all(dir);
  if (!all_same)
    std::fprintf(stderr, "replay: a replayed store differs from the live one\n");
  return all_same ? 0 : 1;
}

}  // namespace engram::bench
