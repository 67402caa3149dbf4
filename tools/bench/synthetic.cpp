#include "tools/bench/synthetic.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>

namespace engram::synthetic {

using json = nlohmann::json;

std::vector<std::string> events(std::size_t n, std::size_t body_bytes, const std::vector<std::string>& orgs) {
  static const std::vector<std::string> people{"Sarah Lee", "Bob Martin", "Dana Kim", "Priya Shah", "Tom Berg",
                                               "Lena Ortiz", "Ken Ito", "Mia Novak"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& org = orgs[i % orgs.size()];
    const auto& sender = people[(i * 7) % people.size()];
    const auto& rcpt = people[(i * 3 + 1) % people.size()];
    auto address = [&](const std::string& name) {
      std::string local;
      for (char c : name)
        if (c != ' ')
          local += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return local + "@" + org + ".example";
    };
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

std::string organization_of(const std::string& event_json) {
  return json::parse(event_json)["organizationId"].get<std::string>();
}

}  // namespace engram::synthetic
