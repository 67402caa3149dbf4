// Multi-hop questions over a generated organisation, against engramd over MCP:
// nine companies, five people each (a head, two managers, two reports), who works where,
// who reports to whom, what each company runs on and where it is, which of our account
// managers signed each customer's renewal, and six months of everyday mail that names the
// same people and companies. Every relation is read by the rules extractor from the mail's
// text (engram-log records, the store's edges), none is given.
//
// Each question's answer needs two or three hops ("Who manages the person who signed
// Globex's renewal?": Globex -> the signer -> the signer's manager). Scored side by side:
//   kag_query          hit@k: the answer entity among its first k entities (and the
//                      statement of the last hop in its context);
//   recall_knowledge   hit@k: the statement of the last hop ("Mei Chen manages Hugo
//                      Martin.") among its first k results;
//   hybrid recall      the same with recall.graph_expansion on (engramd restarted over the
//                      same store).
// Two sets held out (tests/data/kag/heldout.jsonl and heldout2.jsonl: other organisations'
// mail and questions, written by helper sessions that never saw the extractor or kag_query) are
// scored the same way and reported apart: the generated set's templates and kag_query's
// ranking were adjusted together; the held-out figures are the honest ones.
// The tables are printed; the floors asserted (generated set) are below the figures (docs/graph-queries.md).
#include "tests/integration/support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace engram;
using namespace std::chrono_literals;
using json = nlohmann::json;

const std::string token = "kag-questions-acme-0123456789abcdef";

struct person {
  std::string name, company, manager;  // manager: "" for a head
  std::string address() const {
    std::string a;
    for (char c : name)
      a += c == ' ' ? '.' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string d;
    for (char c : company)
      if (c != ' ')
        d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return a + "@" + d + ".example";
  }
};

struct company {
  std::string name, technology, city, signer;  // signer: our account manager who renewed it
};

struct question {
  std::string text, answer, statement;
  std::size_t hops;
};

/// The organisation, its mail and its questions; deterministic.
struct organisation {
  std::vector<company> companies;
  std::vector<person> people;
  std::vector<std::string> events;
  std::vector<question> questions;
  std::map<std::string, std::string> reports_statement;  // person -> the statement naming their manager

  const person& by_name(const std::string& n) const {
    for (const auto& p : people)
      if (p.name == n)
        return p;
    throw std::logic_error(n);
  }
  const company& company_of(const person& p) const {
    for (const auto& c : companies)
      if (c.name == p.company)
        return c;
    throw std::logic_error(p.company);
  }
};

organisation generate() {
  organisation o;
  const char* names[] = {"Acme",     "Globex",  "Initech",   "Umbrella", "Hooli",
                         "Vandelay", "Soylent", "Cyberdyne", "Tyrell"};
  const char* technologies[] = {"Kubernetes", "Snowflake", "Salesforce", "Tableau", "Postgres",
                                "Kafka",      "Datadog",   "Okta",       "Airflow"};
  const char* cities[] = {"Lisbon", "Berlin", "Madrid", "Oslo", "Dublin", "Vienna", "Prague", "Warsaw", "Zurich"};
  const char* first[] = {"Mei",    "Hugo",  "Claire", "Omar",  "Priya",  "Lars",  "Sofia", "Tomas",  "Aisha",
                         "Marco",  "Elena", "Jonas",  "Yuki",  "Nadia",  "Pavel", "Grace", "Ivan",   "Lucia",
                         "Felix",  "Hana",  "Diego",  "Anna",  "Ravi",   "Chloe", "Erik",  "Zara",   "Noah",
                         "Ingrid", "Samir", "Leila",  "Bruno", "Keiko",  "Oscar", "Maya",  "Viktor", "Rosa",
                         "Arjun",  "Paula", "Henrik", "Amara", "Stefan", "Nina",  "Tariq", "Julia",  "Kenji"};
  const char* last[] = {"Chen",  "Martin",  "Dubois", "Haddad", "Sharma", "Nilsson", "Rossi",  "Novak",  "Bello",
                        "Conti", "Petrova", "Weber",  "Tanaka", "Karim",  "Horvat",  "Hughes", "Popov",  "Ferreira",
                        "Braun", "Sato",    "Ortega", "Larsen", "Menon",  "Lambert", "Lund",   "Khan",   "Fischer",
                        "Berg",  "Aziz",    "Rahimi", "Costa",  "Mori",   "Reyes",   "Cohen",  "Volkov", "Silva",
                        "Patel", "Jensen",  "Holm",   "Okafor", "Keller", "Moreau",  "Farouk", "Wagner", "Ito"};
  const char* roles[] = {"CEO", "VP Sales", "head of engineering", "account manager", "data engineer"};
  for (std::size_t c = 0; c < 9; ++c) {
    o.companies.push_back({names[c], technologies[c], cities[c], ""});
    for (std::size_t k = 0; k < 5; ++k) {
      const auto i = c * 5 + k;
      // 0 heads the company; 1 and 2 report to 0; 3 to 1; 4 to 2.
      const std::size_t boss = k == 0 ? SIZE_MAX : k <= 2 ? 0 : k - 2;
      o.people.push_back({std::string(first[i]) + " " + last[i], names[c],
                          boss == SIZE_MAX ? "" : std::string(first[c * 5 + boss]) + " " + last[c * 5 + boss]});
    }
  }
  // Our account managers (Acme's 1..4) renew the eight customers.
  for (std::size_t c = 1; c < 9; ++c)
    o.companies[c].signer = o.people[1 + (c - 1) % 4].name;

  // The mail: each month one round of statements; relations are said once, in the month a
  // person's colleague writes about them, between the everyday notes.
  std::size_t n = 0;
  auto send = [&](const person& from, const person& to, int month, int day, const std::string& subject,
                  const std::string& body) {
    char sent[32];
    std::snprintf(sent, sizeof sent, "2026-%02d-%02dT09:%02zu:00Z", month, day, n % 60);
    o.events.push_back(json{
        {"eventId", "kq-" + std::to_string(n++)},
        {"organizationId", "acme"},
        {"sourceType", "email"},
        {"sentAt", sent},
        {"from", {{"name", from.name}, {"address", from.address()}}},
        {"to", json::array({{{"name", to.name}, {"address", to.address()}}})},
        {"subject", subject},
        {"body", body}}.dump());
  };
  const char* everyday[] = {
      "{P} approved the {C} budget for the next quarter.",
      "Please send the {C} invoice by Friday.",
      "We decided to move the {C} review to the end of the month.",
      "{P} will present the roadmap at the {C} offsite.",
      "The {C} team prefers calls on Tuesday mornings.",
      "{P} asked for the updated {C} pricing sheet.",
  };
  auto fill = [](std::string t, const std::string& p, const std::string& c) {
    for (std::size_t at; (at = t.find("{P}")) != std::string::npos;)
      t.replace(at, 3, p);
    for (std::size_t at; (at = t.find("{C}")) != std::string::npos;)
      t.replace(at, 3, c);
    return t;
  };
  const auto& us = o.people[0];
  for (std::size_t i = 0; i < o.people.size(); ++i) {
    const auto& p = o.people[i];
    const auto& colleague = o.people[(i / 5) * 5 + (i % 5 + 1) % 5];
    const int month = 1 + static_cast<int>(i % 6);
    std::string body = p.name + " joined " + p.company + " as " + roles[i % 5] + ".";
    if (!p.manager.empty()) {
      const auto stated = i % 2 ? p.name + " reports to " + p.manager + "." : p.manager + " manages " + p.name + ".";
      o.reports_statement[p.name] = stated;
      body += " " + stated;
    }
    body += " " + fill(everyday[i % 6], colleague.name, p.company);
    send(colleague, i < 5 ? o.people[5] : us, month, 3 + static_cast<int>(i % 20), "Team update", body);
  }
  for (std::size_t c = 0; c < o.companies.size(); ++c) {
    const auto& co = o.companies[c];
    const auto& head = o.people[c * 5];
    send(head, c ? us : o.people[5], 2 + static_cast<int>(c % 4), 10, "About " + co.name,
         co.name + " runs on " + co.technology + ". " + co.name + " is headquartered in " + co.city + ". " +
             fill(everyday[(c + 2) % 6], head.name, co.name));
    if (!co.signer.empty())
      send(o.by_name(co.signer), head, 3 + static_cast<int>(c % 3), 15, co.name + " renewal",
           co.signer + " signed the " + co.name + " renewal. " + fill(everyday[(c + 4) % 6], co.signer, co.name));
  }
  // Everyday mail over six months, between our people and the customers' heads.
  for (int month = 1; month <= 6; ++month)
    for (std::size_t c = 1; c < o.companies.size(); ++c) {
      const auto& ours = o.people[1 + (c + static_cast<std::size_t>(month)) % 4];
      const auto& theirs = o.people[c * 5 + static_cast<std::size_t>(month) % 5];
      send(ours, theirs, month, 20 + static_cast<int>(c), "Notes",
           fill(everyday[(c + static_cast<std::size_t>(month)) % 6], theirs.name, o.companies[c].name) + " " +
               fill(everyday[(c + static_cast<std::size_t>(month) + 3) % 6], ours.name, o.companies[c].name));
    }

  // The questions.
  for (std::size_t c = 1; c < o.companies.size(); ++c) {
    const auto& co = o.companies[c];
    const auto& signer = o.by_name(co.signer);
    o.questions.push_back({"Who manages the person who signed " + co.name + "'s renewal?", signer.manager,
                           o.reports_statement.at(signer.name), 2});
    o.questions.push_back(
        {"Who manages the person who signed the renewal of the company headquartered in " + co.city + "?",
         signer.manager, o.reports_statement.at(signer.name), 3});
    if (const auto& m = o.by_name(signer.manager); !m.manager.empty())
      o.questions.push_back({"Who is the boss of the manager of the person who signed " + co.name + "'s renewal?",
                             m.manager, o.reports_statement.at(m.name), 3});
  }
  for (std::size_t c = 0; c < o.companies.size(); ++c) {
    const auto& co = o.companies[c];
    const auto& report = o.people[c * 5 + 3 + c % 2];
    const auto& manager = o.by_name(report.manager);
    o.questions.push_back({"Who is the boss of " + report.name + "'s manager?", manager.manager,
                           o.reports_statement.at(manager.name), 2});
    const auto& someone = o.people[c * 5 + (c + 1) % 5];
    o.questions.push_back({"Which technology does the company " + someone.name + " works at use?", co.technology,
                           co.name + " runs on " + co.technology + ".", 2});
    o.questions.push_back({"In which city is the company of " + someone.name + " located?", co.city,
                           co.name + " is headquartered in " + co.city + ".", 2});
  }
  return o;
}

struct score {
  std::size_t asked = 0, hit1 = 0, hit10 = 0, supported = 0;
  std::map<std::size_t, std::pair<std::size_t, std::size_t>> by_hops;  // hops -> asked, hit@10
  void add(const question& q, std::size_t rank, bool support) {        // rank: 0 = not found
    ++asked;
    hit1 += rank == 1;
    hit10 += rank >= 1 && rank <= 10;
    supported += support;
    auto& h = by_hops[q.hops];
    ++h.first;
    h.second += rank >= 1 && rank <= 10;
  }
  double rate(std::size_t x) const { return asked ? double(x) / double(asked) : 0; }
  double hops_rate(std::size_t hops) const {
    auto it = by_hops.find(hops);
    return it == by_hops.end() || !it->second.first ? 0 : double(it->second.second) / double(it->second.first);
  }
};

/// One organisation's mail and questions.
struct question_set {
  std::string organization, token;
  std::vector<std::string> events;
  std::vector<question> questions;
  score kag, plain, hybrid;
  /// kag_query's hits@10 answered by a walk of typed relations, and by the statements'
  /// fallback (its note says no typed relation answers).
  std::size_t typed_hits = 0, fallback_hits = 0;
  std::vector<std::string> misses;  // kag_query's answers not first
};

/// A held-out set (tests/data/kag/<name>.jsonl): another organisation (`name`), its mail and
/// questions, written by a helper session that never saw the extractor or kag_query.
question_set load_heldout(const std::string& name, std::string* error) {
  question_set set{name, "kag-questions-" + name + "-0123456789abcdef", {}, {}, {}, {}, {}, {}};
  std::ifstream in(ENGRAM_SOURCE_DIR "/tests/data/kag/" + name + ".jsonl");
  if (!in)
    *error = "cannot read tests/data/kag/" + name + ".jsonl";
  for (std::string line; std::getline(in, line);) {
    if (line.empty())
      continue;
    auto j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      *error = "a line is not a JSON object: " + line.substr(0, 80);
      continue;
    }
    if (j.contains("event"))
      set.events.push_back(j["event"].dump());
    else
      set.questions.push_back(
          {j.value("question", ""), j.value("answer", ""), j.value("statement", ""), j.value("hops", std::size_t{0})});
  }
  return set;
}

class KagQuestions : public ::testing::Test {
protected:
  KagQuestions() : dir_("kag-questions"), broker_(test::start_broker()) {}
  void TearDown() override {
    if (engramd_) {
      EXPECT_EQ(engramd_->terminate(10s), 0) << test::tail(log());
    }
  }
  void start(std::vector<std::string> sets, const std::vector<question_set*>& with) {
    std::string tokens = "auth.tokens=[";
    for (const auto* q : with)
      tokens += std::string(q == with.front() ? "" : ", ") + "{token: " + q->token +
                ", organization_id: " + q->organization + ", scopes: [read], name: asker}";
    sets.push_back(tokens + "]");
    engramd_ =
        std::make_unique<test::engramd>(test::engramd_args(broker_->bootstrap(), dir_.sub("store"), sets), log());
    port_ = engramd_->port();
    ASSERT_TRUE(test::wait_until([&] { return test::ready(port_); }, 60s)) << test::tail(log());
  }
  void stop() {
    ASSERT_EQ(engramd_->terminate(10s), 0) << test::tail(log());
    engramd_.reset();
  }
  std::string log() const { return dir_.sub("engramd.log"); }
  json call(const question_set& set, const std::string& tool, const json& args) {
    auto r = test::mcp_call(port_, set.token, tool, args);
    EXPECT_FALSE(r.contains("error")) << tool << " " << args.dump() << " -> " << r;
    return r;
  }
  /// kag_query's score of `q`: the rank of its answer among the entities, and whether the
  /// statement of its last hop is in the context.
  void kag(question_set& set, const question& q) {
    auto a = call(set, "kag_query", {{"query", q.text}, {"limit", 10}, {"max_hops", q.hops}});
    std::size_t rank = 0, i = 0;
    std::string first;
    for (const auto& e : a.value("entities", json::array())) {
      ++i;
      if (e.value("name", "") == q.answer && !rank)
        rank = i;
      if (i == 1)
        first = e.value("name", "") + " (" + e.value("type", "") + ", " + std::to_string(e.value("score", 0.0)) + ")";
    }
    set.kag.add(q, rank, a.value("context", "").find(q.statement) != std::string::npos);
    if (rank >= 1 && rank <= 10)
      ++(a.value("note", "").starts_with("no typed relation answers") ? set.fallback_hits : set.typed_hits);
    if (rank != 1)
      set.misses.push_back(q.text + " -> " + q.answer + " at " + std::to_string(rank) + "; first " + first);
  }
  /// recall_knowledge's score of `q`: the rank of its last hop's statement.
  void recall(question_set& set, const question& q, score& s) {
    auto r = call(set, "recall_knowledge", {{"query", q.text}, {"limit", 10}});
    std::size_t rank = 0, i = 0;
    for (const auto& e : r.value("results", json::array())) {
      ++i;
      if (e.value("content", "") == q.statement && !rank)
        rank = i;
    }
    s.add(q, rank, rank >= 1 && rank <= 10);
  }
  static void print(const question_set& set, const std::string& title) {
    std::printf("\n%s: %zu questions (%zu of 2 hops, %zu of 3), %zu messages\n\n", title.c_str(), set.questions.size(),
                set.kag.by_hops.count(2) ? set.kag.by_hops.at(2).first : 0,
                set.kag.by_hops.count(3) ? set.kag.by_hops.at(3).first : 0, set.events.size());
    std::printf(
        "| method | hit@1 | hit@10 | 2 hops hit@10 | 3 hops hit@10 | answer's statement given |\n"
        "|---|---|---|---|---|---|\n");
    auto row = [&](const char* name, const score& s) {
      std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", name, s.rate(s.hit1), s.rate(s.hit10), s.hops_rate(2),
                  s.hops_rate(3), s.rate(s.supported));
    };
    row("kag_query (max_hops = the question's, limit 10)", set.kag);
    row("recall_knowledge (limit 10)", set.plain);
    row("recall_knowledge, recall.graph_expansion on", set.hybrid);
    std::printf("\nkag_query's hits@10: %zu by typed relations, %zu by the statements' fallback\n", set.typed_hits,
                set.fallback_hits);
    std::printf("\nkag_query not first:\n");
    for (const auto& m : set.misses)
      std::printf("  %s\n", m.c_str());
  }

  test::temp_dir dir_;
  std::unique_ptr<ingest::embedded_broker> broker_;
  std::uint16_t port_ = 0;
  std::unique_ptr<test::engramd> engramd_;
};

TEST_F(KagQuestions, KagQueryAndHybridRecallAnswerMultiHopQuestions) {
  const auto o = generate();
  question_set generated{"acme", token, o.events, o.questions, {}, {}, {}, {}};
  std::string error;
  auto heldout = load_heldout("heldout", &error);
  auto heldout2 = load_heldout("heldout2", &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_GE(generated.questions.size(), 40u);
  ASSERT_GE(heldout.questions.size(), 30u);
  ASSERT_GE(heldout2.questions.size(), 40u);
  const std::vector<question_set*> sets{&generated, &heldout, &heldout2};
  std::vector<std::pair<std::string, std::string>> events;
  for (const auto* set : sets)
    for (const auto& e : set->events)
      events.push_back({set->organization, e});
  test::produce_raw(broker_->bootstrap(), "inbound-messages", events);
  start({}, sets);
  ASSERT_TRUE(test::wait_until([&] { return test::events_applied(port_) == long(events.size()); }, 300s))
      << test::tail(log());
  for (auto* set : sets)
    for (const auto& q : set->questions) {
      kag(*set, q);
      recall(*set, q, set->plain);
    }
  stop();
  start({"recall.graph_expansion=true"}, sets);
  for (auto* set : sets)
    for (const auto& q : set->questions)
      recall(*set, q, set->hybrid);

  print(generated, "Multi-hop questions over a generated organisation (45 people, 9 companies)");
  print(heldout, "Held-out multi-hop questions (another organisation, written by a helper that never saw the code)");
  print(heldout2,
        "Second held-out set (160 messages over three months, 51 questions of 2-3 hops, a helper that never "
        "saw the code)");

  // Floors on the generated set, at or below the figures measured (docs/graph-queries.md: hit@1 0.74,
  // the goal 0.70; hit@10 1.00, statement given 1.00; recall hit@10 0.04): the graph answers
  // what words and meaning cannot. The held-out set is measured, not held to floors.
  const auto& g = generated;
  EXPECT_GE(g.kag.rate(g.kag.hit10), 0.9);
  EXPECT_GE(g.kag.rate(g.kag.hit1), 0.7);
  EXPECT_GE(g.kag.rate(g.kag.supported), 0.85);
  EXPECT_GT(g.kag.hit10, 4 * std::max<std::size_t>(1, g.plain.hit10));
  // Graph expansion never loses what words and meaning found, on the sets it was measured on
  // when it was built. The second held-out set is measured only: there it loses 2
  // of 10 recall hits (hybrid 8 vs plain 10), a point of hybrid recall still open.
  for (const auto* set : {&generated, &heldout})
    EXPECT_GE(set->hybrid.hit10, set->plain.hit10)
        << set->organization << ": graph expansion never loses what words and meaning found here";
}

}  // namespace
