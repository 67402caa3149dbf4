// libFuzzer: MIME import (tools/mail/mail_reader.hpp, GMime): any bytes as an .eml file, and
// the HTML-to-text reader. Every message it reads is an inbound event the decoder accepts.
#include "schemas/inbound_message.hpp"
#include "tools/mail/mail_reader.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  (void)engram::mail::html_to_text(input);
  // read_file reads a path: the input goes to a file of this process in /dev/shm.
  static const std::string path = "/dev/shm/engram-fuzz-mime-" + std::to_string(::getpid()) + ".eml";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(input.data(), static_cast<std::streamsize>(input.size()));
  }
  engram::mail::read_options opts;
  opts.organization_id = "acme";
  engram::mail::read_file(path, opts, [](engram::mail::mail_result r) {
    if (!r.error.empty())
      return;
    engram::schemas::inbound_message m;
    if (engram::schemas::decode(r.event_json, {}, m))
      std::abort();  // the reader wrote an event the pipeline would refuse
  });
  return 0;
}
