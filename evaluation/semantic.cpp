#include "evaluation/semantic.hpp"
#include "dedup/dedup.hpp"

#include "reading/read.hpp"
#include "reading/rules.hpp"
#include "actors/store/store_writer.hpp"
#include "knowledge/entry.hpp"

#include <nlohmann/json.hpp>

#include "storage/vector_index.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace engram::evaluation {

namespace {

using json = nlohmann::json;

/// A store and the resolver the store stage would use, in a fresh directory.
struct bench_store {
  std::shared_ptr<storage::graph_store> store;
  actors::resolver resolve;
  std::int64_t offset = 0;

  /// Opens a fresh store in `dir` (whatever was there is removed).
  static result<bench_store> open(const std::string& dir, std::size_t dim, double threshold) {
    std::filesystem::remove_all(dir);
    storage::open_options o;
    o.path = dir;
    auto opened = storage::open_graph_store(o);
    if (!opened)
      return fail(opened.error());
    bench_store bs;
    bs.store = std::move(*opened);
    dedup::dedup_options d;
    d.dim = dim;
    d.threshold = threshold;
    bs.resolve.dedup = std::make_unique<dedup::deduplicator>(bs.store, d);
    bs.resolve.contradiction =
        std::make_unique<contradiction::contradiction_finder>(bs.store, bs.resolve.dedup->reader());
    if (auto loaded = bs.resolve.dedup->open(""); !loaded)
      return fail(loaded.error());
    return bs;
  }

  /// Saves one statement as the given source; returns what was decided for it.
  result<schemas::resolution> save(const embedding::embedder& e, const std::string& org, const std::string& event_id,
                                   const std::string& type, const std::string& text, const std::string& from,
                                   const std::string& source, int hour) {
    auto m = std::make_shared<schemas::inbound_message>();
    m->event_id = event_id;
    m->organization_id = org;
    m->source = source == "manual" ? schemas::source_type::manual
                : source == "chat" ? schemas::source_type::chat
                                   : schemas::source_type::email;
    m->from.address = from;
    char sent[32];
    std::snprintf(sent, sizeof sent, "2026-03-05T%02d:00:00Z", hour);
    m->sent_at = sent;
    m->sent_at_ms = 1772668800000 + std::int64_t(hour) * 3600000;  // 2026-03-05T00:00:00Z + hours
    m->body = text;
    auto t = schemas::parse_entry_type(type);
    if (!t) {
      return fail("unknown entry type '" + type + "' in " + event_id);
    }
    schemas::extracted_message x{*m, reading::read_statement(*m, *t, text, 0.8), {}};
    schemas::extraction* xs[] = {&x.knowledge};
    if (auto embedded = reading::embed_entries(e, xs); !embedded) {
      return fail(embedded.error());
    }
    actors::log_record rec;
    rec.position = {"engram-log", 0, offset++, "bench"};
    rec.payload = std::move(x);
    storage::apply_outcome outcome{};
    services::applied_event answer;
    if (auto err = actors::resolve_and_apply(*store, &resolve, rec, &outcome, &answer); err != storage::errc::ok) {
      return fail("apply failed: " + storage::to_string(err));
    }
    if (answer.resolutions.size() != 1) {
      return fail("statement " + event_id + " gave " + std::to_string(answer.resolutions.size()) + " entries");
    }
    return answer.resolutions[0];
  }
};

result<std::vector<json>> read_jsonl(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path);
  if (!in)
    return fail("cannot read " + path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded())
      return fail(path + ": line " + std::to_string(out.size() + 1) + " is not JSON");
    out.push_back(std::move(j));
  }
  return out;
}

std::string fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

double dedup_report::precision() const {
  std::size_t all = 0, right = 0;
  for (const auto& [kind, n] : merged) {
    all += n;
    if (kind == "near_duplicate" || kind == "paraphrase")
      right += n;
  }
  return all ? double(right) / double(all) : 1.0;
}

double dedup_report::recall() const {
  auto p = pairs.find("near_duplicate");
  if (p == pairs.end() || p->second == 0)
    return 1.0;
  auto m = merged.find("near_duplicate");
  return double(m == merged.end() ? 0 : m->second) / double(p->second);
}

std::string dedup_report::table() const {
  std::string out = "| pair kind | pairs | merged | linked | expected |\n|---|---:|---:|---:|---|\n";
  for (const auto& [kind, n] : pairs) {
    auto m = merged.count(kind) ? merged.at(kind) : 0;
    auto l = linked.count(kind) ? linked.at(kind) : 0;
    const char* want = kind == "near_duplicate" ? "all" : kind == "paraphrase" ? "either" : "none";
    out += "| " + kind + " | " + std::to_string(n) + " | " + std::to_string(m) + " | " + std::to_string(l) + " | " +
           want + " |\n";
  }
  out += "\nmerge precision " + fixed(precision()) + ", near-duplicate recall " + fixed(recall()) + "\n";
  if (!wrong.empty()) {
    out += "decided against the label:";
    for (const auto& w : wrong)
      out += " " + w;
    out += "\n";
  }
  return out;
}

std::string contradiction_report::table() const {
  std::string out = "| case kind | cases | decided as labelled |\n|---|---:|---:|\n";
  for (const auto& [kind, n] : per_kind)
    out += "| " + kind + " | " + std::to_string(n) + " | " +
           std::to_string(per_kind_correct.count(kind) ? per_kind_correct.at(kind) : 0) + " |\n";
  out += "\nprecision " + fixed(precision()) + ", recall " + fixed(recall()) + " (" + std::to_string(correct) + " of " +
         std::to_string(expected) + " expected conflicts, " + std::to_string(raised) +
         " raised); raised between different subjects: " + std::to_string(cross_subject) + "\n";
  if (!wrong.empty()) {
    out += "decided against the label:";
    for (const auto& w : wrong)
      out += " " + w;
    out += "\n";
  }
  return out;
}

std::vector<std::string> jsonl_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir, ec))
    if (f.path().extension() == ".jsonl")
      files.push_back(f.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

dedup_report evaluate_dedup(const std::string& pairs_jsonl, const embedding::embedder& e, const std::string& work_dir,
                            double threshold) {
  return evaluate_dedup(std::vector<std::string>{pairs_jsonl}, e, work_dir, threshold);
}

dedup_report evaluate_dedup(const std::vector<std::string>& pair_files, const embedding::embedder& e,
                            const std::string& work_dir, double threshold) {
  dedup_report r;
  std::vector<json> pairs;
  for (const auto& file : pair_files) {
    auto read = read_jsonl(file);
    if (!read) {
      r.error = read.error();
      return r;
    }
    pairs.insert(pairs.end(), std::make_move_iterator(read->begin()), std::make_move_iterator(read->end()));
  }
  if (pairs.empty()) {
    r.error = "no pairs to evaluate";
    return r;
  }
  auto opened = bench_store::open(work_dir, e.dim(), threshold);
  if (!opened) {
    r.error = opened.error();
    return r;
  }
  auto& bs = *opened;
  for (const auto& p : pairs) {
    const auto id = p.value("id", ""), kind = p.value("kind", ""), type = p.value("type", "fact");
    const auto org = "pair-" + id;
    auto a = bs.save(e, org, id + "-a", type, p.value("a", ""), "sarah@northwind.example", "email", 9);
    auto saved_b = a ? bs.save(e, org, id + "-b", type, p.value("b", ""), "sarah@northwind.example", "email", 10)
                     : fail(a.error());
    if (!saved_b) {
      r.error = saved_b.error();
      return r;
    }
    const auto& b = *saved_b;
    ++r.pairs[kind];
    bool merged = b.outcome == schemas::save_outcome::merged;
    if (merged)
      ++r.merged[kind];
    if (b.outcome == schemas::save_outcome::linked)
      ++r.linked[kind];
    bool want = kind == "near_duplicate";
    if (kind != "paraphrase" && merged != want) {
      r.wrong.push_back(id);
      if (std::getenv("ENGRAM_EVAL_EXPLAIN")) {
        const auto ja = bs.store->get_entry(org, schemas::entry_id(org, id + "-a", 0));
        const auto jb = bs.store->get_entry(org, schemas::entry_id(org, id + "-b", 0));
        const std::string text_a = p.value("a", ""), text_b = p.value("b", "");
        std::vector<std::string_view> texts{text_a, text_b};
        // An explanation only: when the embedder fails, why does not matter and cos shows 0.
        auto v = e.embed(texts);
        // Which check of a merge said no (dedup.cpp: duplicate()).
        std::string checks = "(b merged)";
        knowledge::stored_entry ea, eb;
        if (ja && jb && !knowledge::decode(*ja, ea) && !knowledge::decode(*jb, eb)) {
          auto fa = dedup::facts_of(ea), fb = dedup::facts_of(eb);
          checks = std::string("polarity=") + (fa.positive == fb.positive ? "same" : "differs") +
                   " markers=" + (fa.markers == fb.markers ? "same" : "differ") +
                   " values=" + (dedup::same_values(fa.sig, fb.sig) ? "same" : "differ") + " wording=" +
                   (dedup::same_wording(fa.sig.words, fb.sig.words, fa.order, fb.order) ? "same" : "differs");
        }
        std::fprintf(stderr, "%s %s cos=%.4f outcome=%s %s\n  A %s\n  B %s\n", id.c_str(), kind.c_str(),
                     v ? schemas::similarity(schemas::quantise((*v)[0]), schemas::quantise((*v)[1])) : 0.0f,
                     std::string(schemas::to_string(b.outcome)).c_str(), checks.c_str(),
                     ja ? knowledge::entry_json(*ja)["signature"].dump().c_str() : "(none)",
                     jb ? knowledge::entry_json(*jb)["signature"].dump().c_str() : "(merged)");
      }
    }
  }
  return r;
}

contradiction_report evaluate_contradictions(const std::string& cases_jsonl, const embedding::embedder& e,
                                             const std::string& work_dir, double threshold) {
  contradiction_report r;
  auto read = read_jsonl(cases_jsonl);
  if (!read) {
    r.error = read.error();
    return r;
  }
  const auto& cases = *read;
  auto opened = bench_store::open(work_dir, e.dim(), threshold);
  if (!opened) {
    r.error = opened.error();
    return r;
  }
  auto& bs = *opened;
  for (const auto& c : cases) {
    const auto id = c.value("id", ""), kind = c.value("kind", ""), type = c.value("type", "fact");
    const auto expect = c.value("expect", "none");
    const auto org = "case-" + id;
    const auto& older = c["older"];
    const auto& newer = c["newer"];
    auto o = bs.save(e, org, id + "-older", type, older.value("text", ""), older.value("from", ""),
                     older.value("sourceType", "email"), 9);
    auto saved_n = o ? bs.save(e, org, id + "-newer", type, newer.value("text", ""), newer.value("from", ""),
                               newer.value("sourceType", "email"), 10)
                     : fail(o.error());
    if (!saved_n) {
      r.error = saved_n.error();
      return r;
    }
    const auto& n = *saved_n;
    const auto older_id = schemas::entry_id(org, id + "-older", 0);
    std::string got = "none";
    for (const auto& edge : n.relations)
      if (edge.to == older_id &&
          (edge.type == schemas::relation_type::supersedes || edge.type == schemas::relation_type::contradicts))
        got = std::string(schemas::to_string(edge.type));
    ++r.cases;
    ++r.per_kind[kind];
    if (expect != "none")
      ++r.expected;
    if (got != "none") {
      ++r.raised;
      if (kind == "different_subject")
        ++r.cross_subject;
    }
    if (got != expect && std::getenv("ENGRAM_EVAL_EXPLAIN")) {
      const auto jo = bs.store->get_entry(org, older_id);
      const auto jn = bs.store->get_entry(org, schemas::entry_id(org, id + "-newer", 0));
      auto brief = [](const storage::result<std::string>& j) {
        if (!j)
          return std::string("(merged)");
        auto d = knowledge::entry_json(*j);
        return d["subject"].dump() + " " + d["slot"].dump() + " " + d["polarity"].dump() + " " + d["signature"].dump();
      };
      std::fprintf(stderr, "%s %s expect=%s got=%s outcome=%s\n  O %s\n  N %s\n", id.c_str(), kind.c_str(),
                   expect.c_str(), got.c_str(), std::string(schemas::to_string(n.outcome)).c_str(), brief(jo).c_str(),
                   brief(jn).c_str());
    }
    if (got == expect) {
      ++r.per_kind_correct[kind];
      if (expect != "none")
        ++r.correct;
    } else {
      r.wrong.push_back(id + "(" + got + ")");
    }
  }
  return r;
}

}  // namespace engram::evaluation
