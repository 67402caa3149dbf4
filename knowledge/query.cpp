#include "knowledge/query.hpp"

#include "knowledge/kag.hpp"

#include "schemas/knowledge_save.hpp"
#include "schemas/time.hpp"
#include "storage/vector_index.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace engram::knowledge {

namespace {

/// Candidates each ranked list contributes to a recall.
constexpr std::size_t recall_candidates = 100;
/// Candidates read per result asked: parsing every candidate dominated recall's time; the
/// type and contact filters may then leave fewer than asked.
constexpr std::size_t candidates_per_result = 8;
// Hybrid recall: the graph's list weighs as much as words and meaning together.
constexpr double graph_weight = 2.0;
/// BM25 candidates search reads.
constexpr std::size_t search_candidates = 200;
/// A contact's own knowledge first.
constexpr double own_contact_weight = 2.0;
/// Decayed confidence below this still ranks as this (fusion, not a filter).
constexpr double min_confidence_weight = 0.05;

}  // namespace

query_service::query_service(query_dependencies deps, read_policy policy)
  : deps_(std::move(deps)), policy_(std::move(policy)) {}

std::optional<stored_entry> query_service::load(const std::string& org, const std::string& id) const {
  auto raw = deps_.store->get_entry(org, id);
  stored_entry e;
  if (!raw || decode(*raw, e))
    return std::nullopt;
  return e;
}

json query_service::present(const stored_entry& doc) const {
  return knowledge::present(doc, now(), policy_);
}

bool query_service::branch_alive(const std::string& org, const std::string& branch) const {
  std::int64_t last = 0;
  return !deps_.store->branch_saves(org, branch, &last).empty() && knowledge::branch_alive(last, now(), policy_);
}

void query_service::add_graph(const std::string& org, const std::string& query,
                              std::map<std::string, double>& fused) const {
  // One more ranked list for the fusion, from kag_query's walk (two hops, its ten best
  // entities): the statements behind the relations among them, in the answer's order; then
  // what the named entities' statements say; then the statements of the other entities it
  // ranked, a few each, best entity first.
  constexpr std::size_t per_named = 20, per_reached = 5;
  const auto& store = *deps_.store;
  kag_request q;
  q.query = query.substr(0, std::min(query.size(), kag_limits::query_bytes));
  q.max_hops = 2;
  q.limit = 10;
  const auto answer = kag_query(entity_reader(deps_.store, {}), org, q);
  std::vector<std::string> ranked;
  std::set<std::string> seen;
  auto add = [&](std::string id) {
    if (ranked.size() < recall_candidates && !id.empty() && seen.insert(id).second)
      ranked.push_back(std::move(id));
  };
  for (const auto& rel : answer.relations)
    add(rel.entry_id);
  // The named entities, also those the answer's limit left out.
  for (const auto& named : answer.named)
    for (auto& id : store.entity_entries(org, named, per_named))
      add(std::move(id));
  for (const auto& e : answer.entities)
    if (e.distance > 0)
      for (auto& id : store.entity_entries(org, e.id, per_reached))
        add(std::move(id));
  for (std::size_t i = 0; i < ranked.size(); ++i)
    fused[ranked[i]] += graph_weight / (rrf_k + double(i + 1));
}

std::vector<json> query_service::recall(const std::string& org, const recall_request& r) const {
  std::map<std::string, double> fused;
  const auto terms = deps_.terms(r.query);
  auto text = deps_.store->search_text(org, terms, recall_candidates);
  for (std::size_t i = 0; i < text.size(); ++i)
    fused[text[i].first] += 1.0 / (rrf_k + double(i + 1));
  schemas::vector8 qv;
  if (deps_.embed && deps_.nearest) {
    // Without a vector recall ranks by words alone; why is logged where embedding failed.
    if (auto v = deps_.embed(r.query)) {
      qv = std::move(*v);
      auto near = deps_.nearest(org, qv, recall_candidates);
      for (std::size_t i = 0; i < near.size(); ++i)
        fused[near[i].first] += 1.0 / (rrf_k + double(i + 1));
    }
  }
  if (policy_.graph_expansion)
    add_graph(org, r.query, fused);
  const auto at = now();
  std::map<std::string, stored_entry> branch_docs;  // the branch's own saves, seen only here
  if (!r.branch_id.empty())
    add_branch(org, r.branch_id, at, terms, qv.empty() ? nullptr : &qv, fused, branch_docs);
  std::vector<std::pair<std::string, double>> order(fused.begin(), fused.end());
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : x.first < y.first;
  });
  if (order.size() > r.limit * candidates_per_result)
    order.resize(r.limit * candidates_per_result);
  // A candidate's score is its fused rank times its weight (at most max_weight) times its
  // decayed confidence (at most 1): once the next rank, so bounded, falls below the
  // limit-th best score found, no later candidate can enter the results, and reading
  // stops. Only the results are presented.
  const double max_weight = r.contact_id.empty() ? 1.0 : own_contact_weight;
  std::vector<std::pair<double, stored_entry>> scored;
  auto better = [](const std::pair<double, stored_entry>& x, const std::pair<double, stored_entry>& y) {
    return x.first != y.first ? x.first > y.first : x.second.id < y.second.id;
  };
  for (const auto& [id, rrf] : order) {
    if (scored.size() >= r.limit && rrf * max_weight < scored[r.limit - 1].first)
      break;
    auto overlaid = branch_docs.find(id);
    auto doc = overlaid != branch_docs.end() ? std::optional<stored_entry>(overlaid->second) : load(org, id);
    if (!doc || !recallable(*doc, at, policy_))
      continue;
    if (r.type && doc->type != *r.type)
      continue;
    double weight = 1.0;
    const auto& contacts = doc->contact_ids;
    if (!r.contact_id.empty()) {
      if (std::find(contacts.begin(), contacts.end(), r.contact_id) != contacts.end())
        weight = own_contact_weight;
      else if (!contacts.empty())
        continue;  // another contact's: not in this contact's scope
    }
    const double score =
        rrf * weight * std::max(min_confidence_weight, effective_confidence(*doc, at, policy_));
    std::pair<double, stored_entry> item{score, std::move(*doc)};
    scored.insert(std::upper_bound(scored.begin(), scored.end(), item, better), std::move(item));
    if (scored.size() > r.limit)
      scored.pop_back();
  }
  std::vector<json> results;
  results.reserve(scored.size());
  for (auto& [score, doc] : scored) {
    auto e = knowledge::present(doc, at, policy_);
    e["score"] = score;
    results.push_back(std::move(e));
  }
  return results;
}

std::vector<json> query_service::search(const std::string& org, const search_request& r) const {
  const auto at = now();
  std::vector<json> results;
  for (const auto& [id, score] : deps_.store->search_text(org, deps_.terms(r.query), search_candidates)) {
    if (results.size() == r.limit)
      break;
    auto doc = load(org, id);
    if (!doc || !recallable(*doc, at, policy_) ||
        (r.type && doc->type != *r.type))
      continue;
    auto e = knowledge::present(*doc, at, policy_);
    e["score"] = score;
    results.push_back(std::move(e));
  }
  return results;
}

std::optional<json> query_service::get(const std::string& org, const std::string& id) const {
  auto doc = load(org, id);
  if (!doc)
    return std::nullopt;
  json source = nullptr;
  if (auto raw = deps_.store->get_message(org, doc->event_id))
    source = json::parse(*raw, nullptr, false);
  if (source.is_discarded())
    source = nullptr;
  return json{{"entry", present(*doc)}, {"source", source}};
}

std::vector<json> query_service::review_queue(const std::string& org, std::size_t limit) const {
  const auto at = now();
  std::vector<json> items;
  for (const auto& [flagged, by] : deps_.store->review_queue(org, limit)) {
    auto older = load(org, flagged);
    if (!older)
      continue;
    json newer = nullptr;
    if (auto n = load(org, by))
      newer = knowledge::present(*n, at, policy_);
    items.push_back({{"entry", knowledge::present(*older, at, policy_)}, {"contradictedBy", newer}});
  }
  return items;
}

void query_service::add_branch(const std::string& org, const std::string& branch, std::int64_t at,
                               const std::vector<std::string>& q, const schemas::vector8* qv,
                               std::map<std::string, double>& fused, std::map<std::string, stored_entry>& docs) const {
  std::int64_t last = 0;
  auto saves = deps_.store->branch_saves(org, branch, &last);
  if (saves.empty() || !knowledge::branch_alive(last, at, policy_))
    return;
  const std::set<std::string> qset(q.begin(), q.end());
  std::vector<std::pair<double, std::string>> by_vector, by_words;
  for (const auto& b : saves) {
    schemas::knowledge_save s;
    if (schemas::decode(b.save_json, s))
      continue;
    auto doc = branch_entry(s);
    const auto eid = doc.id;
    docs[eid] = std::move(doc);
    if (qv && b.embedding.size() == qv->size())
      by_vector.emplace_back(-static_cast<double>(schemas::similarity(*qv, b.embedding)), eid);
    std::size_t shared = 0;
    const auto words = deps_.terms(s.title + " " + s.content);
    for (const auto& t : std::set<std::string>(words.begin(), words.end()))
      shared += qset.count(t);
    if (shared)
      by_words.emplace_back(-static_cast<double>(shared), eid);
  }
  for (auto* ranked : {&by_vector, &by_words}) {
    std::sort(ranked->begin(), ranked->end());
    for (std::size_t i = 0; i < ranked->size(); ++i)
      fused[(*ranked)[i].second] += 1.0 / (rrf_k + double(i + 1));
  }
}

}  // namespace engram::knowledge
