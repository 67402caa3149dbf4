#pragma once
// Reads e-mail (.eml files, mbox files, maildir or plain folders) with GMime and turns each
// message into an inbound event (schemas/inbound-message.schema.json). MIME multipart,
// quoted-printable, base64 and charsets are decoded to UTF-8; an HTML-only body becomes text.

#include "base/result.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace engram::mail {

/// One message read, or why it could not be.
struct mail_result {
  /// The file, with "#N" for the N-th message of an mbox.
  std::string source;
  /// The inbound event as one JSON line; empty when `error` is set.
  std::string event_json;
  std::string error;
};

struct read_options {
  std::string organization_id;
  /// Longer bodies are cut (at a character boundary) so the event stays under the limit.
  std::size_t max_body_bytes = 512 * 1024;
};

/// The files `paths` name: files as given, folders walked recursively (maildir tmp/ skipped),
/// sorted for a stable order. An error when a path does not exist.
[[nodiscard]] engram::result<std::vector<std::string>> list_files(const std::vector<std::string>& paths);

/// Reads every message of one file (an mbox holds several), calling `on_message` for each.
/// Never throws; a malformed message is reported through mail_result::error.
void read_file(const std::string& path, const read_options& opts, const std::function<void(mail_result)>& on_message);

/// HTML to plain text: tags dropped, block ends as line breaks, entities decoded.
[[nodiscard]] std::string html_to_text(std::string_view html);

}  // namespace engram::mail
