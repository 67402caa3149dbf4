#pragma once
// Message cleaning: keeps the new text of a message and drops what an earlier message or
// a footer already said, so a reply never re-extracts its quote. Pure functions.

#include <optional>
#include <string>
#include <string_view>

namespace engram::reading {

/// Facts read from a signature block.
struct signature {
  std::string name;
  std::string role;
  std::string company;
  std::string phone;
  /// The block's lines as written, one per line, without its phone lines and contact lines (a
  /// phone number inside a line of bars stays)
  /// ("Tomasz Wiśniewski\nCommercial Director\nBaltra Freight Sp. z o.o.\nGdańsk, Poland").
  std::string block;
};

struct cleaned_message {
  /// The new text: no quoted reply, forwarded or original-message block, no signature,
  /// disclaimer or list footer.
  std::string text;
  std::optional<signature> sig;
  bool quoted = false;
  bool disclaimer = false;
};

/// Cleans a body. `sender_name` (may be empty) helps recognise a signature that is only a
/// name line.
[[nodiscard]] cleaned_message clean(std::string_view body, std::string_view sender_name);

/// Reads a signature block (lines after "--" or a sign-off).
[[nodiscard]] std::optional<signature> parse_signature(std::string_view block, std::string_view sender_name);

}  // namespace engram::reading
