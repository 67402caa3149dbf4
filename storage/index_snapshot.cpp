// The snapshot of the store's in-memory indexes: written beside the store at a stop, loaded
// at the next open in place of reading every row of their column families again.
//
// Files, in <store>/indexes/: indexes.bin (format 3: "engram-indexes", the format, the
// store's identity, the entries' BM25 postings, the passages' BM25 postings, each
// organisation's passage count, then its passage vector ids by sequence; format 2 held no
// echoes in its postings and format 1 one count for all: both are rebuilt) and one hnswlib file a
// organisation, <hex of its id>.passages.hnsw (with its .sum). The meta row "i" marks
// indexes.bin current with its size and FNV-1a. A save deletes the row and the journal,
// writes every file, then the row; while the row stands, each batch that changes the indexes
// writes a journal row with it (index_journal.cpp), which an open applies after the files.
#include "storage/internal/graph_store_impl.hpp"
#include "storage/internal/snapshot_file.hpp"

#include <chrono>

namespace engram::storage::detail {

namespace {

constexpr std::string_view magic = "engram-indexes";
constexpr std::uint32_t format = 3;
constexpr const char* main_file = "indexes.bin";

}  // namespace

engram::result<bool> kv_graph_store::save_indexes() {
  if (indexes_dir_.empty())
    return false;
  std::unique_lock gate(save_gate_);
  // The mark names what is held and no batch (nor journal row replayed at the open) changed it
  // since: the files are these indexes already (a stop after an idle run writes nothing).
  if (indexes_marked_.load(std::memory_order_acquire) && unsaved_batches_.load(std::memory_order_relaxed) == 0)
    return false;
  if (auto saved = save_indexes_locked(); !saved)
    return engram::fail(saved.error());
  return true;
}

engram::result<bool> kv_graph_store::checkpoint_indexes(std::uint64_t every,
                                                        const std::function<engram::result<void>()>& first) {
  const auto due = [&] {
    const auto n = unsaved_batches_.load(std::memory_order_relaxed);
    return every > 0 && !indexes_dir_.empty() && n >= every && n >= checkpoint_retry_at_.load();
  };
  if (!due())
    return false;
  std::unique_lock gate(save_gate_);
  if (!due())  // another applier saved while this one waited
    return false;
  // A failure waits `every` more batches before the next try, not one.
  const auto retry = [&](const std::string& why) {
    checkpoint_retry_at_.store(unsaved_batches_.load(std::memory_order_relaxed) + every);
    return engram::fail(why);
  };
  if (first)
    if (auto done = first(); !done)
      return retry(done.error());
  if (auto saved = save_indexes_locked(); !saved)
    return retry(saved.error());
  checkpoint_retry_at_.store(0);
  return true;
}

engram::result<void> kv_graph_store::save_indexes_locked() {
  std::error_code ec;
  std::filesystem::create_directories(indexes_dir_, ec);
  if (ec)
    return engram::fail("cannot create '" + indexes_dir_ + "': " + ec.message());
  if (auto e = forget_snapshot(); e != errc::ok)  // the files change from here on
    return engram::fail("cannot remove the mark of the indexes snapshot: " + to_string(e));
  snapshot_out out(indexes_dir_ + "/" + main_file);
  out.raw(magic.data(), magic.size());
  out.u32(format);
  out.bytes(identity());
  text_.write(out);
  passage_text_.write(out);
  if (auto saved = save_passage_vectors(out, indexes_dir_); !saved)
    return saved;
  auto sum = out.install();
  if (!sum)
    return engram::fail(sum.error());
  kv_batch mark;
  mark.put(cf_meta, meta_tag::indexes, encode_u64(sum->size) + encode_u64(sum->hash) + static_cast<char>(sum->kind));
  if (auto e = kv_->write(mark); e != errc::ok)
    return engram::fail("cannot mark the indexes snapshot current: " + to_string(e));
  indexes_marked_.store(true, std::memory_order_release);
  return {};
}

std::string kv_graph_store::load_indexes() {
  auto mark = kv_->get(cf_meta, meta_tag::indexes);
  if (!mark)
    return mark.error() == errc::not_found
               ? "no snapshot marked current: a first open, a crash during a save, or the last open could not load it"
               : "cannot read the snapshot's mark: " + to_string(mark.error());
  // The mark: size and checksum (u64 each), then the checksum's kind (one byte; a mark of 16
  // bytes, the first format, is FNV-1a).
  const bool tagged = mark->size() == 17 && static_cast<std::uint8_t>((*mark)[16]) <= 1;
  if (mark->size() != 16 && !tagged)
    return "the snapshot's mark is not 16 or 17 bytes";
  const auto kind = tagged ? static_cast<sum_kind>((*mark)[16]) : sum_kind::fnv1a;
  auto in = snapshot_in::open(indexes_dir_ + "/" + main_file, {decode_u64(*mark), decode_u64(mark->substr(8)), kind});
  if (!in)
    return in.error();
  if (in->bytes_of(magic.size()) != magic || in->u32() != format || in->bytes() != identity())
    return "indexes.bin is of another format or another store";
  if (!text_.read(*in) || !passage_text_.read(*in))
    return "indexes.bin: its postings do not hold together";
  // Postings read out of the order of their ids were numbered again: the next save writes
  // them so, and the next open reads them without sorting (as after a batch).
  if (text_.read_sorted_again() || passage_text_.read_sorted_again())
    unsaved_batches_.fetch_add(1, std::memory_order_relaxed);
  if (auto why = load_passage_vectors(*in, indexes_dir_); !why.empty())
    return why;
  if (!in->ok() || !in->at_end())
    return "indexes.bin: its passage vectors do not hold together";
  if (auto why = replay_journal(&indexes_opened_.journal_rows); !why.empty())
    return why;
  indexes_marked_.store(true, std::memory_order_release);
  return "";
}

errc kv_graph_store::open_indexes(std::string dir, bool writable) {
  const auto t0 = std::chrono::steady_clock::now();
  indexes_dir_ = std::move(dir);
  indexes_opened_ = {};
  indexes_opened_.why_rebuilt = load_indexes();
  indexes_opened_.from_snapshot = indexes_opened_.why_rebuilt.empty();
  if (!indexes_opened_.from_snapshot) {
    // What the mark named is not served: it goes, with its journal, so batches are not
    // journaled against it and no later open loads it (a read-only open writes nothing).
    if (writable)
      if (auto e = forget_snapshot(); e != errc::ok)
        return e;
    indexes_opened_.journal_rows = 0;
    text_.clear();
    passage_text_.clear();
    clear_passage_vectors();
    if (auto e = load_text_index(); e != errc::ok)
      return e;
    if (auto e = load_passage_indexes(); e != errc::ok)
      return e;
  }
  indexes_opened_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return errc::ok;
}

}  // namespace engram::storage::detail
