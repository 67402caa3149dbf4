#include "reading/read.hpp"

#include "logging/log.hpp"
#include "reading/rules.hpp"

#include <spdlog/spdlog.h>

#include <functional>
#include <thread>

namespace engram::reading {

namespace {
spdlog::logger& logger() { return logging::get(logging::module::extractor); }

schemas::extraction read_one(const schemas::inbound_message& m, const reader_context& ctx) {
  validation_report report;
  llm_failure fallback = llm_failure::none;
  auto x = extract_message(m, ctx.options, &report, &fallback);
  if (report.dropped_over_cap)
    logger().info("{}: {} statements past the first {} not kept (extraction.max_entries_per_message)", m.event_id,
                  report.dropped_over_cap, ctx.options.validator.max_entries);
  if (ctx.counters) {
    if (fallback != llm_failure::none)
      ctx.counters->count_llm_fallback(to_string(fallback));
    ctx.counters->count_message_class(to_string(report.verdict.cls));
    ctx.counters->count_extraction(x.entries.size(), report.dropped_low_confidence,
                                   report.injection_signals.empty() ? 0 : x.entries.size(), report.dropped_injected);
  }
  return x;
}

/// Embeds what `xs` read; on failure, leaves every entry without a vector (counted).
void embed_or_clear(const reader_context& ctx, std::span<schemas::extraction* const> xs) {
  if (!ctx.embedder)
    return;
  if (auto embedded = embed_entries(*ctx.embedder, xs, ctx.max_embedded); !embedded) {
    logger().warn("embedding failed, entries of this batch are stored without vectors: {}", embedded.error());
    if (ctx.counters)
      ctx.counters->count_embedding_failure();
    for (auto* x : xs) {
      for (auto& en : x->entries)
        en.embedding = {};
      for (auto& p : x->passages)
        p.embedding = {};
    }
  }
}

}  // namespace

engram::result<void> embed_entries(const embedding::embedder& e, std::span<schemas::extraction* const> xs,
                                   std::size_t max_per_message) {
  constexpr std::size_t run = 64;
  auto embed_all = [&](const std::vector<std::string_view>& all,
                       const std::function<void(std::size_t, schemas::vector8)>& put) -> engram::result<void> {
    std::vector<std::string_view> texts;
    for (std::size_t b = 0; b < all.size(); b += run) {
      auto n = std::min(run, all.size() - b);
      texts.assign(all.begin() + static_cast<std::ptrdiff_t>(b), all.begin() + static_cast<std::ptrdiff_t>(b + n));
      auto vectors = e.embed(texts);
      if (!vectors)
        return engram::fail(vectors.error());
      for (std::size_t i = 0; i < n; ++i)
        put(b + i, schemas::quantise((*vectors)[i]));
    }
    return {};
  };
  std::vector<schemas::entry*> entries;
  std::vector<std::string_view> texts;
  for (auto* x : xs) {
    std::size_t n = 0;
    for (auto& en : x->entries)
      if (max_per_message == 0 || n++ < max_per_message) {
        entries.push_back(&en);
        texts.push_back(en.content);
      }
  }
  if (auto done = embed_all(texts, [&](std::size_t i, schemas::vector8 v) { entries[i]->embedding = std::move(v); });
      !done)
    return done;
  // A passage whose text its entries say (nearly) all of takes their vectors (the sum):
  // nothing is embedded twice. A passage with more in it than its entries (greetings around
  // a statement, sentences no entry was read from) is embedded as itself, once.
  // Only a message of one passage (a chat message, a short mail) has its passage embedded:
  // the encoder's time stays bounded by the entries for long mail, whose passages take their
  // entries' vectors, or none (BM25 finds them).
  constexpr double covered_share = 0.8;
  const std::size_t max_passages_embedded = 1;
  std::vector<schemas::passage*> rest;
  texts.clear();
  for (auto* x : xs) {
    std::size_t embedded = 0;
    for (auto& p : x->passages) {
      std::vector<float> sum;
      std::size_t covered = 0;
      for (const auto& en : x->entries)
        if (!en.embedding.empty() && p.text.find(en.content) != std::string::npos) {
          auto v = schemas::dequantise(en.embedding);
          if (sum.empty())
            sum.assign(v.size(), 0.0f);
          for (std::size_t i = 0; i < v.size() && i < sum.size(); ++i)
            sum[i] += v[i];
          covered += en.content.size();
        }
      if (!sum.empty() && double(covered) >= covered_share * double(p.text.size())) {
        p.embedding = schemas::quantise(sum);
      } else if (x->passages.size() == 1 && embedded < max_passages_embedded) {
        ++embedded;
        rest.push_back(&p);
        texts.push_back(p.text);
      } else if (!sum.empty()) {
        p.embedding = schemas::quantise(sum);
      }
    }
  }
  return embed_all(texts, [&](std::size_t i, schemas::vector8 v) { rest[i]->embedding = std::move(v); });
}

std::vector<schemas::extraction> read_messages(std::span<const schemas::inbound_message> messages,
                                               const reader_context& ctx, unsigned threads) {
  std::vector<schemas::extraction> out(messages.size());
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(messages.size())));
  // Message i goes to thread i % threads: each result lands in its own slot, in order.
  auto stopped = [&] { return ctx.stop && ctx.stop->load(std::memory_order_relaxed); };
  auto work = [&](unsigned t) {
    for (std::size_t i = t; i < messages.size() && !stopped(); i += threads)
      out[i] = read_one(messages[i], ctx);
  };
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t)
    helpers.emplace_back(work, t);
  work(0);
  for (auto& h : helpers)
    h.join();
  if (stopped())
    return out;  // incomplete: the caller drops it
  std::vector<schemas::extraction*> xs;
  for (auto& x : out)
    xs.push_back(&x);
  embed_or_clear(ctx, xs);
  return out;
}

void read_unread(std::span<schemas::log_payload* const> records, const reader_context& ctx, bool re_extract) {
  std::vector<schemas::inbound_message> messages;
  std::vector<schemas::log_payload*> unread;
  for (auto* p : records) {
    if (auto* m = std::get_if<schemas::inbound_message>(p)) {
      messages.push_back(std::move(*m));
      unread.push_back(p);
    } else if (auto* x = std::get_if<schemas::extracted_message>(p); x && re_extract) {
      messages.push_back(std::move(x->message));
      unread.push_back(p);
    } else if (auto* s = std::get_if<schemas::knowledge_save>(p); s && s->embedding.empty() && ctx.embedder) {
      // An agent's statement is taken as given (read_save); only its vector is missing.
      auto one = read_save(*s);
      schemas::extraction* xs[] = {&one};
      embed_or_clear(ctx, xs);
      if (!one.entries.empty())
        s->embedding = std::move(one.entries[0].embedding);
    }
  }
  if (messages.empty())
    return;
  auto read = read_messages(messages, ctx);
  for (std::size_t i = 0; i < unread.size(); ++i)
    *unread[i] = schemas::extracted_message{std::move(messages[i]), std::move(read[i])};
}

}  // namespace engram::reading
