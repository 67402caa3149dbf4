#include "tools/engramctl/events.hpp"

#include "actors/ingest/producer.hpp"
#include "schemas/inbound_message.hpp"
#include "tools/engramctl/input.hpp"
#include "tools/mail/mail_reader.hpp"

#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

namespace engram::ctl {

namespace {

/// True when `organization` is an organizationId an inbound event accepts; the reason on
/// stderr otherwise.
bool valid_organization(const std::string& organization) {
  engram::schemas::inbound_message probe;
  std::string doc = R"({"eventId":"x","organizationId":")" + organization +
                    R"(","sourceType":"email","sentAt":"2026-01-01T00:00:00Z","from":{"address":"a@b"},"body":""})";
  if (auto err = engram::schemas::decode(doc, {}, probe)) {
    std::cerr << "import: --organization: " << err->reason << "\n";
    return false;
  }
  return true;
}

/// Where imported events go: a producer (--brokers) or a JSONL file (--output).
struct event_sink {
  std::unique_ptr<engram::ingest::kafka_producer> producer;
  std::ofstream out;
};

/// Opens the sink the options name; false with the reason on stderr.
bool open_sink(const import_options& o, event_sink& sink) {
  if (!o.brokers.empty()) {
    auto made = engram::ingest::kafka_producer::create(o.brokers, {});
    if (!made) {
      std::cerr << "import: " << made.error() << "\n";
      return false;
    }
    sink.producer = std::move(*made);
  } else {
    sink.out.open(o.output);
    if (!sink.out) {
      std::cerr << "import: cannot write " << o.output << "\n";
      return false;
    }
  }
  return true;
}

/// The import's progress line on a terminal's stderr, redrawn at most every 100 ms.
struct import_progress {
  std::size_t files = 0, done_files = 0, events = 0, malformed = 0;
  bool tty = ::isatty(2);
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

  void show(bool final) {
    if (!tty)
      return;
    auto now = std::chrono::steady_clock::now();
    if (!final && now - last < std::chrono::milliseconds(100))
      return;
    last = now;
    constexpr int width = 30;
    int filled = files == 0 ? width : static_cast<int>(width * done_files / files);
    std::cerr << "\r[" << std::string(static_cast<std::size_t>(filled), '=')
              << std::string(static_cast<std::size_t>(width - filled), ' ') << "] " << done_files << "/" << files
              << " files, " << events << " events, " << malformed << " malformed" << std::flush;
    if (final)
      std::cerr << "\n";
  }
};

}  // namespace

int produce(const produce_options& o) {
  // The input first: a file that cannot be read is said before anything connects.
  std::ifstream f;
  std::istream* in = open_input(o.file, f, "produce");
  if (!in)
    return 1;
  auto made = engram::ingest::kafka_producer::create(o.brokers, {});
  if (!made) {
    std::cerr << "produce: " << made.error() << "\n";
    return 1;
  }
  auto& producer = *made;
  auto report = engram::ingest::produce_events(*producer, o.topic, *in, o.max_bytes);
  for (const auto& p : report.problems)
    std::cerr << o.file << ": " << p << "\n";
  if (!report.error.empty()) {
    std::cerr << "produce: " << report.error << "\n";
    return 1;
  }
  std::cout << "produced " << report.produced << " events to " << o.topic << ", rejected " << report.rejected << "\n";
  return report.rejected ? 1 : 0;
}

int import_mail(const import_options& o) {
  if (o.brokers.empty() && o.output.empty()) {
    std::cerr << "import: give --brokers ADDR (produce) or --output FILE (JSONL)\n";
    return 2;
  }
  if (!valid_organization(o.organization))
    return 2;
  auto listed = engram::mail::list_files(o.paths);
  if (!listed) {
    std::cerr << "import: " << listed.error() << "\n";
    return 1;
  }
  const auto& files = *listed;
  event_sink sink;
  if (!open_sink(o, sink))
    return 1;
  import_progress progress;
  progress.files = files.size();
  engram::mail::read_options opts;
  opts.organization_id = o.organization;
  for (const auto& f : files) {
    engram::mail::read_file(f, opts, [&](engram::mail::mail_result r) {
      if (!r.error.empty()) {
        ++progress.malformed;
        if (progress.tty)
          std::cerr << "\r\033[K";
        std::cerr << r.source << ": " << r.error << "\n";
        return;
      }
      if (sink.producer) {
        auto org_key = o.organization;
        if (!sink.producer->produce(o.topic, org_key, r.event_json)) {
          std::cerr << "import: " << sink.producer->last_error() << "\n";
          return;
        }
      } else {
        sink.out << r.event_json << "\n";
      }
      ++progress.events;
    });
    ++progress.done_files;
    progress.show(false);
  }
  progress.show(true);
  if (sink.producer && !sink.producer->flush(std::chrono::seconds(60))) {
    std::cerr << "import: " << sink.producer->last_error() << "\n";
    return 1;
  }
  std::cout << "imported " << progress.events << " events from " << files.size() << " files"
            << (sink.producer ? " to " + o.topic : " to " + o.output) << ", " << progress.malformed << " malformed\n";
  return 0;
}

}  // namespace engram::ctl
