// Entity resolution in the store (knowledge/resolve.hpp, storage/resolution.cpp): a mention
// that is not a known name as written joins the entity it names, with its evidence, in log
// order; an ambiguous short form stays apart; an identifier is never a person or company.
#include "knowledge/entry.hpp"
#include "storage/graph_store.hpp"

#include <gtest/gtest.h>

namespace {

using namespace engram;

class ResolutionTest : public ::testing::Test {
protected:
  /// Applies a message from `from` (name, address) to `to` with one mention per name.
  void say(const std::string& event, const std::string& thread, std::pair<std::string, std::string> from,
           std::vector<std::pair<std::string, std::string>> to,
           std::vector<std::pair<schemas::entity_kind, std::string>> mentions) {
    schemas::inbound_message m;
    m.event_id = event;
    m.organization_id = "acme";
    m.thread_id = thread;
    m.sent_at = "2026-04-01T08:00:00Z";
    m.sent_at_ms = 1775030400000;
    m.from = {from.first, from.second, ""};
    for (auto& [name, address] : to)
      m.to.push_back({name, address, ""});
    m.subject = "s";
    m.body = "b";
    schemas::extraction x;
    for (auto& [kind, name] : mentions)
      x.mentions.push_back({kind, name, name, {}, {}, {}, {}, {}});
    storage::apply_outcome out{};
    ASSERT_EQ(store_->apply({"engram-log", 0, offset_++, "c"}, &m, &x, nullptr, &out), storage::errc::ok);
  }
  knowledge::stored_entity entity(const std::string& name) {
    knowledge::stored_entity e;
    auto id = store_->entity_id("acme", name);
    auto j = store_->get_entity("acme", id);
    EXPECT_TRUE(j) << name;
    if (j)
      EXPECT_FALSE(knowledge::decode(*j, e));
    return e;
  }

  std::unique_ptr<storage::graph_store> store_ = storage::make_memory_graph_store();
  std::int64_t offset_ = 0;
};

constexpr auto person = schemas::entity_kind::person;
constexpr auto company = schemas::entity_kind::organization;
constexpr auto technology = schemas::entity_kind::technology;

TEST_F(ResolutionTest, AFirstNameJoinsTheOnlyPersonOfThatNameWithItsEvidence) {
  say("e1", "t1", {"Marcus Chen", "marcus@lf.example"}, {{"José Álvarez", "jose@lf.example"}}, {});
  say("e2", "t2", {"Dana Fox", "dana@lf.example"}, {}, {{person, "Marcus"}, {person, "Jose Alvarez"}});
  const auto marcus = entity("Marcus Chen");
  EXPECT_EQ(marcus.id, "person:marcus@lf.example");
  ASSERT_EQ(marcus.resolutions.size(), 1u);
  EXPECT_EQ(marcus.resolutions[0].mention, "Marcus");
  EXPECT_EQ(marcus.resolutions[0].event_id, "e2");
  EXPECT_NE(marcus.resolutions[0].reason.find("only person"), std::string::npos) << marcus.resolutions[0].reason;
  // The short form is evidence, not a name: another Marcus may come.
  EXPECT_EQ(store_->entity_id("acme", "Marcus"), "");
  // Diacritics folded: the same person, and the name is kept as an alias.
  EXPECT_EQ(store_->entity_id("acme", "Jose Alvarez"), "person:jose@lf.example");
}

TEST_F(ResolutionTest, AnAmbiguousFirstNameJoinsTheOneInTheMessageOrStaysApart) {
  say("e1", "t1", {"Priya Desai", "pd@lf.example"}, {{"Priya Raghunathan", "pr@lf.example"}}, {});
  // To Priya Desai: "Priya" is the recipient.
  say("e2", "t2", {"Dana Fox", "dana@lf.example"}, {{"Priya Desai", "pd@lf.example"}}, {{person, "Priya"}});
  // Neither Priya takes part, and the writer has written with neither: no join.
  say("e3", "t3", {"Kwame Mensah", "kwame@lf.example"}, {}, {{person, "Priya"}});
  // Neither takes part, but Dana wrote to Priya Desai before: her.
  say("e4", "t4", {"Dana Fox", "dana@lf.example"}, {}, {{person, "Priya"}});
  const auto desai = entity("Priya Desai"), raghunathan = entity("Priya Raghunathan");
  ASSERT_EQ(desai.resolutions.size(), 2u);
  EXPECT_EQ(desai.resolutions[0].event_id, "e2");
  EXPECT_NE(desai.resolutions[0].reason.find("in the message"), std::string::npos);
  EXPECT_EQ(desai.resolutions[1].event_id, "e4");
  EXPECT_NE(desai.resolutions[1].reason.find("known to the message's participants"), std::string::npos);
  EXPECT_TRUE(raghunathan.resolutions.empty());
  EXPECT_EQ(store_->entity_id("acme", "Priya"), "person:~priya");
}

TEST_F(ResolutionTest, TitlesInitialsAndAFullNameAfterAFirstName) {
  say("e1", "t1", {"Dana Fox", "dana@lf.example"}, {}, {{person, "Wei"}});
  say("e2", "t1", {"Dana Fox", "dana@lf.example"}, {}, {{person, "Wei Chen"}, {person, "Oluwaseun Adeyemi"}});
  say("e3", "t1", {"Dana Fox", "dana@lf.example"}, {}, {{person, "Mr. Adeyemi"}, {person, "wei c"}});
  const auto wei = entity("Wei");
  EXPECT_EQ(store_->entity_id("acme", "Wei Chen"), wei.id) << "the full name joins the person known as Wei";
  ASSERT_EQ(wei.resolutions.size(), 2u);
  EXPECT_EQ(wei.resolutions[1].mention, "wei c");
  const auto seun = entity("Oluwaseun Adeyemi");
  ASSERT_EQ(seun.resolutions.size(), 1u);
  EXPECT_EQ(seun.resolutions[0].mention, "Mr. Adeyemi");
}

TEST_F(ResolutionTest, OrganisationsWithoutLegalFormAndTechnologyAliases) {
  say("e1", "t1", {"Dana Fox", "dana@lf.example"}, {},
      {{company, "Acme Corporation"}, {company, "Brightmoor Bank plc"}, {technology, "PostgreSQL"}});
  say("e2", "t1", {"Dana Fox", "dana@lf.example"}, {},
      {{company, "ACME corp"},
       {company, "Brightmoor"},
       {company, "Globex Software GmbH"},
       {company, "Globex Ltd"},
       {company, "Globex"},
       {technology, "Postgres"}});
  EXPECT_EQ(store_->entity_id("acme", "ACME corp"), store_->entity_id("acme", "Acme Corporation"));
  // "Brightmoor": the only company whose name starts with it.
  EXPECT_EQ(entity("Brightmoor Bank plc").resolutions.size(), 1u);
  // "Globex" is Globex Ltd without its legal form, not Globex Software.
  EXPECT_EQ(store_->entity_id("acme", "Globex"), store_->entity_id("acme", "Globex Ltd"));
  EXPECT_NE(store_->entity_id("acme", "Globex Ltd"), store_->entity_id("acme", "Globex Software GmbH"));
  EXPECT_EQ(store_->entity_id("acme", "Postgres"), store_->entity_id("acme", "PostgreSQL"));
}

TEST_F(ResolutionTest, AFirstNameReadBeforeItsOwnerYieldsToThePersonTheMessageNames) {
  // "Mateus" read before anyone called Mateus was known: a person known only as Mateus.
  say("e1", "t1", {"Dana Fox", "dana@lf.example"}, {}, {{person, "Mateus"}});
  say("e2", "t2", {"Mateus Gonçalves", "mateus.goncalves@lf.example"}, {{"Dana Fox", "dana@lf.example"}}, {});
  // Later "Mateus" is Mateus Gonçalves, the only person of that name, not the early one.
  say("e3", "t3", {"Kwame Mensah", "kwame@lf.example"}, {}, {{person, "Mateus"}});
  const auto mateus = entity("Mateus Gonçalves");
  ASSERT_EQ(mateus.resolutions.size(), 1u);
  EXPECT_EQ(mateus.resolutions[0].event_id, "e3");
  EXPECT_EQ(store_->entity_id("acme", "Mateus"), "person:~mateus") << "the early mention stays where it was";
}

TEST_F(ResolutionTest, TheOneTheParticipantsKnowAndTheWordsOfAnAddress) {
  say("e1", "t1", {"Priya Desai", "pd@lf.example"}, {{"Hamid Karimi", "hamid@gx.example"}}, {});
  say("e2", "t2", {"Priya Raghunathan", "pr@lf.example"}, {{"Rachel Goldberg", "rachel@acme.example"}}, {});
  // José writes to Rachel of "Priya": the Priya Rachel has corresponded with.
  say("e3", "t3", {"José Álvarez", "jose@lf.example"}, {{"Rachel Goldberg", "rachel@acme.example"}},
      {{person, "Priya"}});
  const auto raghunathan = entity("Priya Raghunathan");
  ASSERT_EQ(raghunathan.resolutions.size(), 1u);
  EXPECT_NE(raghunathan.resolutions[0].reason.find("known to the message's participants"), std::string::npos);
  // Nobody here has written with either Priya: no join.
  say("e4", "t4", {"Dana Fox", "dana@lf.example"}, {{"Kwame Mensah", "kwame@lf.example"}}, {{person, "Priya"}});
  EXPECT_EQ(entity("Priya Desai").resolutions.size(), 0u);
  EXPECT_EQ(entity("Priya Raghunathan").resolutions.size(), 1u);
  // "Seun" is Oluwaseun Adeyemi by his address, seun.adeyemi@.
  say("e5", "t5", {"Oluwaseun Adeyemi", "seun.adeyemi@lf.example"}, {}, {});
  say("e6", "t6", {"Tomás Ruiz", "tomas@nl.example"}, {}, {{person, "Seun"}});
  EXPECT_EQ(entity("Oluwaseun Adeyemi").resolutions.size(), 1u);
}

TEST_F(ResolutionTest, PlacesWithoutTheirRegionAndProductsWithoutTheirMaker) {
  const auto place = schemas::entity_kind::location;
  say("e1", "t1", {"Dana Fox", "dana@lf.example"}, {},
      {{place, "Cambridge, MA"}, {company, "Globex Ltd"}, {technology, "Globex Relay"}});
  say("e2", "t1", {"Dana Fox", "dana@lf.example"}, {},
      {{place, "Cambridge"}, {place, "Cambridge, UK"}, {technology, "relay"}, {place, "Portland"}});
  say("e3", "t1", {"Dana Fox", "dana@lf.example"}, {}, {{place, "Portland, Oregon"}, {place, "Portland, Maine"}});
  EXPECT_EQ(store_->entity_id("acme", "Cambridge"), store_->entity_id("acme", "Cambridge, MA"));
  EXPECT_NE(store_->entity_id("acme", "Cambridge, UK"), store_->entity_id("acme", "Cambridge, MA"))
      << "another region is another place";
  EXPECT_EQ(store_->entity_id("acme", "relay"), store_->entity_id("acme", "Globex Relay"));
  EXPECT_EQ(store_->entity_id("acme", "Portland, Oregon"), store_->entity_id("acme", "Portland"));
  EXPECT_NE(store_->entity_id("acme", "Portland, Maine"), store_->entity_id("acme", "Portland"))
      << "\"Portland\" is Portland, Oregon now";
}

TEST_F(ResolutionTest, AnIdentifierIsNeverAPersonOrACompany) {
  say("e1", "t1", {"Dana Fox", "dana@lf.example"}, {},
      {{company, "CT-88213"}, {person, "PO#77812"}, {company, "SR 102334"}, {company, "LF-INS-PRO"}});
  for (const char* id : {"CT-88213", "PO#77812", "SR 102334", "LF-INS-PRO"})
    EXPECT_EQ(store_->entity_id("acme", id), "") << id;
}

TEST_F(ResolutionTest, TheSameEventsResolveTheSameWayInAnotherStore) {
  auto events = [this] {
    say("e1", "t1", {"Priya Desai", "pd@lf.example"}, {{"Priya Raghunathan", "pr@lf.example"}}, {});
    say("e2", "t1", {"Dana Fox", "dana@lf.example"}, {}, {{person, "Priya"}, {company, "Acme Corp"}});
    say("e3", "t2", {"Dana Fox", "dana@lf.example"}, {}, {{person, "priya r"}, {company, "acme"}});
  };
  events();
  const auto first = store_->digest();
  store_ = storage::make_memory_graph_store();
  offset_ = 0;
  events();
  EXPECT_EQ(store_->digest(), first);
}

}  // namespace
