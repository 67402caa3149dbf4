// The SpamAssassin corpus through import and rules extraction; bulk and spam mail by folder (ham_bench.hpp).
#include "tools/bench/ham_bench.hpp"

#include "reading/bulk.hpp"
#include "reading/extract.hpp"
#include "reading/validator.hpp"
#include "schemas/inbound_message.hpp"
#include "schemas/knowledge.hpp"
#include "tools/bench/bench_support.hpp"
#include "tools/mail/mail_reader.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace engram::bench {

namespace {

/// The labelled sample of list and bulk mail (tests/data/mail-classes, labelled by a helper
/// that never saw the classifier): precision and recall of "person" for classify_message.
void bench_mail_classes(const std::string& data_dir, const std::string& file) {
  std::ifstream in("tests/data/mail-classes/" + file);
  if (!in)
    throw std::runtime_error("tests/data/mail-classes/" + file + ": not found (run from the source root)");
  std::size_t tp = 0, fp = 0, fn = 0, tn = 0;
  std::string line;
  mail::read_options ro;
  ro.organization_id = "classes";
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    const bool person = j["class"] == "person";
    mail::read_file(data_dir + "/" + j["folder"].get<std::string>() + "/" + j["file"].get<std::string>(), ro,
                    [&](mail::mail_result r) {
                      schemas::inbound_message m;
                      if (!r.error.empty() || schemas::decode(r.event_json, {1u << 20}, m))
                        return;
                      const auto v = reading::classify_message(m);
                      const bool said = v.cls == reading::message_class::person;
                      (said ? (person ? tp : fp) : (person ? fn : tn))++;
                      if (std::getenv("ENGRAM_BENCH_MISSES") && said != person)
                        std::fprintf(stderr, "%s %s/%s: %s\n", person ? "MISSED PERSON" : "FALSE PERSON",
                                     j["folder"].get<std::string>().c_str(), j["file"].get<std::string>().c_str(),
                                     j["why"].get<std::string>().c_str());
                    });
  }
  std::printf(
      "\nLabelled list and bulk mail (tests/data/mail-classes/%s, %zu messages): person-written precision "
      "%.3f, recall %.3f (%zu true, %zu false, %zu missed; %zu bulk kept out)\n",
      file.c_str(), tp + fp + fn + tn, tp + fp ? double(tp) / double(tp + fp) : 0.0,
      tp + fn ? double(tp) / double(tp + fn) : 0.0, tp, fp, fn, tn);
}

}  // namespace

int bench_ham(const std::string& data_dir) {
  using clock_type = std::chrono::steady_clock;
  std::size_t files = 0, malformed = 0;
  auto t0 = clock_type::now();
  auto msgs = ham_messages(data_dir, "spamassassin", &files, &malformed);
  double import_s = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::vector<double> rates;
  std::size_t entries = 0, suspicious = 0, over_caps = 0, max_title = 0, max_content = 0;
  std::map<std::string, std::size_t> titles;
  std::map<std::string, std::size_t> types;
  // One pass for the figures, then timed passes that do nothing else.
  for (const auto& m : msgs) {
    auto x = reading::extract_validated(m, {});
    entries += x.entries.size();
    for (const auto& e : x.entries) {
      auto tc = reading::utf8_chars(e.title), cc = reading::utf8_chars(e.content);
      max_title = std::max(max_title, tc);
      max_content = std::max(max_content, cc);
      over_caps += tc > 80 || cc > 2000 || e.confidence < 0 || e.confidence > 1;
      suspicious += e.suspicious;
      ++titles[e.title];
      ++types[std::string(schemas::to_string(e.type))];
    }
  }
  std::vector<double> cpu_rates;
  for (int run = 0; run < 5; ++run) {
    auto t1 = clock_type::now();
    double c1 = thread_cpu_seconds();
    std::size_t n = 0;
    for (const auto& m : msgs)
      n += reading::extract_validated(m, {}).entries.size();
    if (n != entries)
      throw std::runtime_error("extraction is not deterministic");
    cpu_rates.push_back(static_cast<double>(msgs.size()) / (thread_cpu_seconds() - c1));
    rates.push_back(static_cast<double>(msgs.size()) / std::chrono::duration<double>(clock_type::now() - t1).count());
  }
  std::printf("SpamAssassin ham (easy-ham-1, easy-ham-2, hard-ham-1): %zu files, %zu messages, %zu malformed\n", files,
              msgs.size(), malformed);
  std::printf("  import (GMime, MIME decoding, charsets): %.0f messages/s on 1 core\n",
              static_cast<double>(files) / import_s);
  std::printf(
      "  rules extraction + validation: %.0f messages per CPU-second on 1 core (%.0f/s wall; median of 5), "
      "%.2f entries/message\n",
      median(cpu_rates), median(rates), msgs.empty() ? 0.0 : double(entries) / double(msgs.size()));
  std::printf("  entries by type:");
  for (const auto& [t, n] : types)
    std::printf(" %s %zu", t.c_str(), n);
  std::printf("\n  longest title %zu chars, longest content %zu chars, over the caps: %zu, suspicious: %zu\n",
              max_title, max_content, over_caps, suspicious);
  std::vector<std::pair<std::size_t, std::string>> top;
  for (const auto& [t, n] : titles)
    top.emplace_back(n, t);
  std::sort(top.begin(), top.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::printf("  20 most frequent entry titles:\n");
  for (std::size_t i = 0; i < top.size() && i < 20; ++i)
    std::printf("    %4zu  %s\n", top[i].first, top[i].second.c_str());
  return over_caps == 0 ? 0 : 1;
}

int bench_bulk(const std::string& data_dir) {
  bench_mail_classes(data_dir, "classes.jsonl");  // the development sample
  bench_mail_classes(data_dir, "heldout.jsonl");  // labelled after the classifier was written
  std::printf("\nBulk and spam mail by folder (entries per message with extraction.bulk keep / skip):\n\n");
  std::printf(
      "| folder | messages | person | bulk | spam | entries/message, keep | entries/message, skip | person "
      "messages' entries, skip |\n|---|---|---|---|---|---|---|---|\n");
  reading::validator_options keep;
  keep.bulk = reading::bulk_policy::keep;
  for (const char* folder : {"easy-ham-1", "hard-ham-1", "spam-1", "easy-ham-2", "spam-2"}) {
    auto msgs = ham_messages(data_dir, "bulk", nullptr, nullptr, {folder});
    std::size_t by[3] = {}, kept = 0, skipped = 0, person_entries = 0;
    for (const auto& m : msgs) {
      reading::validation_report r;
      auto x = reading::extract_validated(m, {}, &r);
      ++by[static_cast<int>(r.verdict.cls)];
      skipped += x.entries.size();
      if (r.verdict.cls == reading::message_class::person)
        person_entries += x.entries.size();
      kept += reading::extract_validated(m, keep).entries.size();
    }
    const double n = msgs.empty() ? 1.0 : double(msgs.size());
    std::printf("| %s | %zu | %zu | %zu | %zu | %.2f | %.2f | %.2f |\n", folder, msgs.size(), by[0], by[1], by[2],
                double(kept) / n, double(skipped) / n, by[0] ? double(person_entries) / double(by[0]) : 0.0);
  }
  return 0;
}

}  // namespace engram::bench
