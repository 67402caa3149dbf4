#include "query/entity_graph.hpp"

#include "knowledge/write_rules.hpp"
#include "schemas/entity_command.hpp"

#include <algorithm>
#include <deque>
#include <queue>
#include <unordered_map>

namespace engram::query {

namespace {

std::vector<std::string> words_of(std::string_view norm) {
  std::vector<std::string> out;
  std::string w;
  for (unsigned char c : norm) {
    if (std::isalnum(c) || c >= 0x80) {
      w += static_cast<char>(c);
    } else if (!w.empty()) {
      out.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty())
    out.push_back(std::move(w));
  return out;
}

/// How well `q` (normalised) names `name` (normalised): 0 when it does not.
double name_score(const std::string& q, const std::string& name) {
  if (q.empty() || name.empty())
    return 0;
  if (q == name)
    return 1.0;
  const double cover = double(q.size()) / double(name.size());
  if (name.starts_with(q))
    return 0.9 + 0.09 * cover;
  double best = 0;
  const auto qw = words_of(q);
  const auto nw = words_of(name);
  for (const auto& w : nw)
    if (w.starts_with(q))
      best = std::max(best, 0.8 + 0.09 * cover);
  if (name.find(q) != std::string::npos)
    best = std::max(best, 0.7 + 0.09 * cover);
  // Every query word is a word of the name (any order): "collison patrick".
  if (!qw.empty() && std::all_of(qw.begin(), qw.end(),
                                 [&](const std::string& w) { return std::find(nw.begin(), nw.end(), w) != nw.end(); }))
    best = std::max(best, 0.75 + 0.09 * cover);
  // A typo: the query against the name's start of the same length, or a whole word.
  const std::size_t allowed = q.size() >= 8 ? 2 : q.size() >= 4 ? 1 : 0;
  if (allowed) {
    auto typo = [&](std::string_view target) {
      const auto d = edit_distance(q, target);
      if (d <= allowed)
        best = std::max(best, 0.6 * (1.0 - double(d) / double(q.size() + 1)) + 0.09 * cover);
    };
    typo(std::string_view(name).substr(0, std::min(name.size(), q.size())));
    for (const auto& w : nw)
      typo(w);
  }
  return best;
}

std::string lower_key(const std::string& type) { return schemas::type_key(type); }

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string shown_type(const knowledge::stored_entity& e) { return e.entity_type.empty() ? e.kind : e.entity_type; }

entity_view view_of(const knowledge::stored_entity& e) {
  return {e.id, e.name, shown_type(e), e.aliases, e.attributes, e.observations, e.resolutions};
}

std::string mermaid_text(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "#quot;"; break;
      case '#': out += "#35;"; break;
      case '<': out += "#lt;"; break;
      case '>': out += "#gt;"; break;
      case '|': out += "#124;"; break;
      case '\n':
      case '\r':
      case '\t': out += ' '; break;
      default:
        if (c >= 0x20)
          out += static_cast<char>(c);
    }
  }
  return out;
}

entity_reader::entity_reader(std::shared_ptr<const storage::graph_store> store,
                             std::map<std::string, std::string> type_parents)
    : store_(std::move(store)) {
  for (const auto& [child, parent] : type_parents)
    parents_[lower_key(child)] = lower_key(parent);
}

std::optional<entity_view> entity_reader::by_id(const std::string& org, const std::string& id) const {
  auto raw = store_->get_entity(org, id);
  knowledge::stored_entity e;
  if (!raw || knowledge::decode(*raw, e))
    return std::nullopt;
  return view_of(e);
}

std::optional<entity_view> entity_reader::by_name(const std::string& org, const std::string& name) const {
  auto id = store_->entity_id(org, name);
  return id.empty() ? std::nullopt : by_id(org, id);
}

std::vector<entity_view> entity_reader::list(const std::string& org, const std::string& after,
                                             std::size_t limit) const {
  std::vector<entity_view> out;
  for (const auto& [id, raw] : store_->list_entities(org, after, limit)) {
    knowledge::stored_entity e;
    if (!knowledge::decode(raw, e))
      out.push_back(view_of(e));
  }
  return out;
}

std::vector<std::pair<entity_view, double>> entity_reader::search(const std::string& org, const std::string& query,
                                                                  std::size_t limit) const {
  const auto q = normalise_name(query);
  std::vector<std::pair<std::string, double>> scored;  // (id, score)
  std::map<std::string, std::string> names;
  store_->scan_entities(org, [&](const storage::entity_summary& e) {
    double best = 0;
    for (std::size_t i = 0; i < e.normalised.size(); ++i)
      best = std::max(best, (i == 0 ? 1.0 : 0.98) * name_score(q, e.normalised[i]));
    if (best > 0) {
      scored.emplace_back(std::string(e.id), std::min(1.0, best));
      names[std::string(e.id)] = std::string(e.name);
    }
  });
  std::sort(scored.begin(), scored.end(), [&](const auto& x, const auto& y) {
    return x.second != y.second ? x.second > y.second : names[x.first] < names[y.first];
  });
  if (scored.size() > limit)
    scored.resize(limit);
  std::vector<std::pair<entity_view, double>> out;
  for (const auto& [id, score] : scored)
    if (auto v = by_id(org, id))
      out.emplace_back(std::move(*v), score);
  return out;
}

double entity_reader::type_match(const std::string& type, const std::string& candidate) const {
  const auto want = lower_key(type);
  auto at = lower_key(candidate);
  double confidence = 1.0;
  for (std::size_t level = 0; level < 16; ++level) {
    if (at == want)
      return confidence;
    auto up = parents_.find(at);
    if (up == parents_.end())
      return 0;
    at = up->second;
    confidence *= 0.8;
  }
  return 0;  // a cycle in the configured parents
}

std::vector<storage::entity_edge> entity_reader::edges(const std::string& org, const std::string& id,
                                                       edge_direction d) const {
  std::vector<storage::entity_edge> out;
  if (d != edge_direction::incoming)
    out = store_->entity_edges(org, id, true);
  if (d != edge_direction::outgoing) {
    auto in = store_->entity_edges(org, id, false);
    out.insert(out.end(), std::make_move_iterator(in.begin()), std::make_move_iterator(in.end()));
  }
  return out;
}

std::vector<traversal_node> entity_reader::traverse(const std::string& org, const std::string& start_id,
                                                    std::size_t max_depth, const std::set<std::string>& labels,
                                                    edge_direction d, std::size_t limit, bool* truncated) const {
  std::vector<traversal_node> out;
  *truncated = false;
  auto light = [&](const std::string& id) -> std::optional<entity_view> {
    entity_view v;
    v.id = id;
    if (!store_->entity_name(org, id, &v.name, &v.entity_type))
      return std::nullopt;
    return v;
  };
  auto start = light(start_id);
  if (!start)
    return out;
  std::unordered_map<std::string, std::size_t> seen{{start_id, 0}};
  out.push_back({*start, 0, 1.0, {}, {}});
  std::vector<std::string> frontier{start_id};
  for (std::size_t depth = 1; depth <= max_depth && !frontier.empty(); ++depth) {
    // Each level in name order, and each node reached through the least (name, label) of its
    // parents, so the answer does not depend on the order edges are read.
    std::map<std::string, std::pair<std::string, std::string>> reach;  // id -> (via, label)
    for (const auto& id : frontier) {
      const auto from_name = out[seen[id]].entity.name;
      for (const auto& e :
           store_->entity_neighbours(org, id, d != edge_direction::incoming, d != edge_direction::outgoing)) {
        if ((!labels.empty() && !labels.count(e.label)) || seen.count(e.other_id))
          continue;
        std::pair<std::string, std::string> how{from_name, e.label};
        auto it = reach.find(e.other_id);
        if (it == reach.end() || how < it->second)
          reach[e.other_id] = std::move(how);
      }
    }
    std::vector<traversal_node> level;
    std::vector<std::string> next;
    for (auto& [other, how] : reach) {
      auto v = light(other);
      if (!v)
        continue;
      seen.emplace(other, SIZE_MAX);
      level.push_back({std::move(*v), depth, 1.0 / (1.0 + double(depth)), std::move(how.first), std::move(how.second)});
      next.push_back(other);
    }
    std::sort(level.begin(), level.end(), [](const auto& a, const auto& b) { return a.entity.name < b.entity.name; });
    for (auto& n : level) {
      if (out.size() >= limit) {
        *truncated = true;
        return out;
      }
      seen[n.entity.id] = out.size();
      out.push_back(std::move(n));
    }
    frontier = std::move(next);
  }
  return out;
}

namespace {

edge_direction reverse(edge_direction d) {
  return d == edge_direction::outgoing   ? edge_direction::incoming
         : d == edge_direction::incoming ? edge_direction::outgoing
                                         : edge_direction::both;
}

/// How each reached node was reached: the node before it (towards its side's start) and the edge.
struct reached {
  std::string prev;
  storage::entity_edge edge;
  double cost = 0;
  std::size_t hops = 0;
};

/// A path search's view of the graph: an organisation's edges, only those with `labels`
/// (all when empty).
struct path_graph {
  const storage::graph_store& store;
  const std::string& org;
  const std::set<std::string>& labels;

  /// Calls fn(other id, edge) for each edge at `id` in direction `dir`.
  template <class F>
  void follow(const std::string& id, edge_direction dir, const F& fn) const {
    for (auto& n : store.entity_neighbours(org, id, dir != edge_direction::incoming, dir != edge_direction::outgoing)) {
      if (!labels.empty() && !labels.count(n.label))
        continue;
      storage::entity_edge e{n.outgoing ? id : n.other_id, n.outgoing ? n.other_id : id, n.label, n.weight, {}, {}};
      fn(n.other_id, std::move(e));
    }
  }
};

/// The path of fewest hops (within max_depth) as its node ids and edges; false when none.
bool fewest_hops(const path_graph& g, const std::string& from_id, const std::string& to_id, std::size_t max_depth,
                 edge_direction d, std::vector<storage::entity_edge>& steps, std::vector<std::string>& ids) {
  // Breadth-first from both ends, a level at a time on the smaller frontier; the first
  // meeting at the lowest total depth wins (ties: the smallest meeting id), so the answer
  // does not depend on the order edges are read.
  std::map<std::string, reached> side[2];
  side[0][from_id] = {};
  side[1][to_id] = {};
  std::vector<std::string> frontier[2] = {{from_id}, {to_id}};
  std::size_t depth[2] = {0, 0};
  std::string meet;
  while (meet.empty() && depth[0] + depth[1] < max_depth && (!frontier[0].empty() || !frontier[1].empty())) {
    const int s = frontier[1].empty() || (!frontier[0].empty() && frontier[0].size() <= frontier[1].size()) ? 0 : 1;
    std::vector<std::string> next;
    for (const auto& id : frontier[s])
      g.follow(id, s == 0 ? d : reverse(d), [&](const std::string& other, storage::entity_edge e) {
        auto it = side[s].find(other);
        if (it == side[s].end()) {
          side[s][other] = {id, std::move(e), 0, depth[s] + 1};
          next.push_back(other);
        } else if (it->second.hops == depth[s] + 1 &&
                   std::tie(id, e.label) < std::tie(it->second.prev, it->second.edge.label)) {
          it->second = {id, std::move(e), 0, depth[s] + 1};  // the least parent: order-free answers
        }
      });
    ++depth[s];
    std::sort(next.begin(), next.end());
    for (const auto& id : next)
      if (side[1 - s].count(id)) {
        meet = id;
        break;
      }
    frontier[s] = std::move(next);
  }
  if (meet.empty())
    return false;
  for (auto at = meet; at != from_id;) {
    const auto& r = side[0][at];
    steps.push_back(r.edge);
    ids.push_back(at);
    at = r.prev;
  }
  ids.push_back(from_id);
  std::reverse(ids.begin(), ids.end());
  std::reverse(steps.begin(), steps.end());
  for (auto at = meet; at != to_id;) {
    const auto& r = side[1][at];
    steps.push_back(r.edge);
    at = r.prev;
    ids.push_back(at);
  }
  return true;
}

/// The path of least total weight (within max_depth hops) as its node ids and edges; false when none.
bool lightest(const path_graph& g, const std::string& from_id, const std::string& to_id, std::size_t max_depth,
              edge_direction d, std::vector<storage::entity_edge>& steps, std::vector<std::string>& ids) {
  // Dijkstra over (cost, hops, id), within max_depth hops.
  std::map<std::string, reached> best{{from_id, {}}};
  using item = std::tuple<double, std::size_t, std::string>;
  std::priority_queue<item, std::vector<item>, std::greater<>> queue;
  queue.emplace(0.0, 0, from_id);
  std::set<std::string> done;
  while (!queue.empty()) {
    // Named, not a structured binding: the lambda below uses them (clang 14, which builds the
    // sanitizer and fuzz trees, cannot capture bindings).
    const double cost = std::get<0>(queue.top());
    const std::size_t hops = std::get<1>(queue.top());
    const std::string id = std::get<2>(queue.top());
    queue.pop();
    if (!done.insert(id).second)
      continue;
    if (id == to_id || hops == max_depth)
      continue;
    g.follow(id, d, [&](const std::string& other, storage::entity_edge e) {
      if (done.count(other))
        return;
      const double c = cost + e.weight;
      auto it = best.find(other);
      if (it == best.end() || c < it->second.cost ||
          (c == it->second.cost && (hops + 1 < it->second.hops ||
                                    (hops + 1 == it->second.hops &&
                                     std::tie(id, e.label) < std::tie(it->second.prev, it->second.edge.label))))) {
        best[other] = {id, std::move(e), c, hops + 1};
        queue.emplace(c, hops + 1, other);
      }
    });
  }
  if (!done.count(to_id))
    return false;
  ids.push_back(to_id);
  for (auto at = to_id; at != from_id;) {
    const auto& r = best[at];
    steps.push_back(r.edge);
    at = r.prev;
    ids.push_back(at);
  }
  std::reverse(ids.begin(), ids.end());
  std::reverse(steps.begin(), steps.end());
  return true;
}

}  // namespace

std::optional<graph_path> entity_reader::path(const std::string& org, const std::string& from_id,
                                              const std::string& to_id, std::size_t max_depth,
                                              const std::set<std::string>& labels, edge_direction d,
                                              bool by_weight) const {
  const path_graph g{*store_, org, labels};
  std::vector<storage::entity_edge> steps;
  std::vector<std::string> ids;
  if (from_id == to_id) {
    ids.push_back(from_id);
  } else if (!by_weight) {
    if (!fewest_hops(g, from_id, to_id, max_depth, d, steps, ids))
      return std::nullopt;
  } else if (!lightest(g, from_id, to_id, max_depth, d, steps, ids)) {
    return std::nullopt;
  }
  std::map<std::string, std::string> names;
  for (const auto& id : ids) {
    std::string type;
    if (!store_->entity_name(org, id, &names[id], &type))
      names[id] = id;  // an edge to an entity no longer there: named by its id
  }
  graph_path p;
  for (const auto& id : ids)
    p.nodes.push_back(names[id]);
  for (const auto& e : steps) {
    p.edges.push_back({names[e.from_id], names[e.to_id], e.label, e.weight});
    p.total_weight += e.weight;
  }
  return p;
}

std::string entity_reader::mermaid(const std::string& org, const std::string& center_id, std::size_t depth,
                                   std::size_t limit, std::size_t* shown, std::size_t* omitted) const {
  std::vector<entity_view> nodes;
  *omitted = 0;
  if (!center_id.empty()) {
    bool truncated = false;
    for (auto& n : traverse(org, center_id, depth, {}, edge_direction::both, limit, &truncated))
      nodes.push_back(std::move(n.entity));
    if (truncated) {
      bool more = false;
      *omitted = traverse(org, center_id, depth, {}, edge_direction::both, SIZE_MAX, &more).size() - nodes.size();
    }
  } else {
    nodes = list(org, "", limit);
    if (nodes.size() == limit) {
      std::string after = nodes.back().id;
      for (;;) {
        auto page = store_->list_entities(org, after, 4096);
        if (page.empty())
          break;
        *omitted += page.size();
        after = page.back().first;
      }
    }
  }
  std::map<std::string, std::string> ref;  // entity id -> Mermaid node id
  std::string out = "graph LR\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    ref[nodes[i].id] = "n" + std::to_string(i + 1);
    out += "  n" + std::to_string(i + 1) + "[\"" + mermaid_text(nodes[i].name) + "<br/>(" +
           mermaid_text(nodes[i].entity_type) + ")\"]\n";
  }
  for (const auto& n : nodes)
    for (const auto& e : store_->entity_edges(org, n.id, true)) {
      auto to = ref.find(e.to_id);
      if (to != ref.end())
        out += "  " + ref[n.id] + " -->|" + mermaid_text(e.label) + "| " + to->second + "\n";
    }
  if (*omitted)
    out += "  %% " + std::to_string(*omitted) + " more entities not shown (limit " + std::to_string(limit) + ")\n";
  *shown = nodes.size();
  return out;
}

}  // namespace engram::query
