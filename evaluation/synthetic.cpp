#include "evaluation/synthetic.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <iterator>

namespace engram::evaluation::synthetic {

using json = nlohmann::json;

namespace {
/// "Sarah Lee" at acme -> sarahlee@acme.example
std::string address_of(const std::string& name, const std::string& org) {
  std::string local;
  for (char c : name)
    if (c != ' ')
      local += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return local + "@" + org + ".example";
}
}  // namespace

std::vector<std::string> events(std::size_t n, std::size_t body_bytes, const std::vector<std::string>& orgs) {
  static const std::vector<std::string> people{"Sarah Lee", "Bob Martin", "Dana Kim", "Priya Shah",
                                               "Tom Berg",  "Lena Ortiz", "Ken Ito",  "Mia Novak"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& org = orgs[i % orgs.size()];
    const auto& sender = people[(i * 7) % people.size()];
    const auto& rcpt = people[(i * 3 + 1) % people.size()];
    auto address = [&](const std::string& name) { return address_of(name, org); };
    std::string body = "Message " + std::to_string(i) + ": we agreed on item " + std::to_string(i % 17) + ". ";
    while (body.size() < body_bytes)
      body += "More detail about the plan and its next steps. ";
    char sent[32];
    std::snprintf(sent, sizeof sent, "2026-03-%02zuT%02zu:%02zu:00Z", 1 + (i / 1440) % 28, (i / 60) % 24, i % 60);
    json e{{"eventId", "evt-" + std::to_string(i)},
           {"organizationId", org},
           {"sourceType", i % 4 == 0 ? "chat" : "email"},
           {"threadId", org + "-thr-" + std::to_string(i % 23)},
           {"sentAt", sent},
           {"from", {{"name", sender}, {"address", address(sender)}, {"contactId", "c-" + std::to_string(i % 11)}}},
           {"to", json::array({{{"name", rcpt}, {"address", address(rcpt)}}})},
           {"cc", json::array()},
           {"subject", "Topic " + std::to_string(i % 23)},
           {"body", body},
           {"contactIds", json::array({"c-" + std::to_string(i % 11)})}};
    out.push_back(e.dump());
  }
  return out;
}

const std::vector<std::string>& dense_people() {
  static const std::vector<std::string> people{"Sarah Lee",   "Bob Martin",  "Dana Kim",  "Priya Shah",
                                               "Tom Berg",    "Lena Ortiz",  "Ken Ito",   "Mia Novak",
                                               "Omar Haddad", "Julia Weiss", "Raj Patel", "Eva Lund"};
  return people;
}

std::vector<std::string> dense_events(std::size_t n, const std::vector<std::string>& orgs) {
  const auto& people = dense_people();
  static const char* products[] = {"analytics", "storage",   "support",  "hosting",   "payroll",   "security",
                                   "billing",   "reporting", "training", "licensing", "logistics", "marketing"};
  static const char* months[] = {"January", "February", "March",     "April",   "May",      "June",
                                 "July",    "August",   "September", "October", "November", "December"};
  static const char* days[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"};
  static const char* currencies[] = {"EUR", "USD", "GBP", "CHF"};
  std::vector<std::string> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& org = orgs[i % orgs.size()];
    auto pick = [&](auto& list, std::size_t salt) {
      return std::string(list[(i * salt + salt / 3) % std::size(list)]);
    };
    const auto who = pick(people, 7), other = pick(people, 5), product = pick(products, 11);
    const auto month = pick(months, 13), day = pick(days, 3);
    const auto date = std::to_string(1 + (i * 17) % 28);
    std::string body = "Hi team,\n\n";
    body += "The " + product + " contract with " + org + " renews on " + month + " " + date + ", 2027. ";
    body += "We agreed on a budget of " + std::to_string(10 + (i * 37) % 900) + ",000 " + pick(currencies, 5) +
            " for the " + product + " rollout. ";
    body += who + " will send the revised proposal for order " + std::to_string(1000 + i) + " by " + day + ". ";
    body += "The review meeting for project " + std::to_string(i % 997) + " moved to " + day + " at " +
            std::to_string(1 + (i * 5) % 11) + "pm. ";
    body += other + " prefers to receive invoices for account " + std::to_string(i) + " by email. ";
    body += "Our goal is to sign " + std::to_string(2 + i % 40) + " new " + product + " customers by " + month + ". ";
    body += other + " is the new account manager for region " + std::to_string(i % 31) + ". ";
    body += "We decided to move ticket " + std::to_string(5000 + i) + " to the " + product +
            " queue.\n\nBest regards,\n" + who + "\n";
    auto address = [&](const std::string& name) { return address_of(name, org); };
    char sent[32];
    std::snprintf(sent, sizeof sent, "2026-03-%02zuT%02zu:%02zu:00Z", 1 + (i / 1440) % 28, (i / 60) % 24, i % 60);
    json e{{"eventId", "dense-" + std::to_string(i)},
           {"organizationId", org},
           {"sourceType", "email"},
           {"threadId", org + "-dense-" + std::to_string(i % 41)},
           {"sentAt", sent},
           {"from", {{"name", who}, {"address", address(who)}, {"contactId", "c-" + std::to_string(i % 13)}}},
           {"to", json::array({{{"name", other}, {"address", address(other)}}})},
           {"cc", json::array()},
           {"subject", "Account update " + std::to_string(i)},
           {"body", body},
           {"contactIds", json::array({"c-" + std::to_string(i % 13)})}};
    out.push_back(e.dump());
  }
  return out;
}

std::string organization_of(const std::string& event_json) {
  return json::parse(event_json)["organizationId"].get<std::string>();
}

}  // namespace engram::evaluation::synthetic
