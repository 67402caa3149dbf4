#pragma once
// Prompt-injection screening (flag suspicious content, lower confidence):
// one list of the patterns, used by the validator to flag a message and by extraction to
// keep an injected instruction from becoming an entry. What a message says besides the
// injection is kept (and marked by the validator); only the instruction is left out.
// Pure functions, thread-safe.

#include <string>
#include <string_view>
#include <vector>

namespace engram::reading {

/// Finds prompt-injection patterns in a message's text: instruction overrides, fake role
/// or system tags, delimiter breaking, Unicode obfuscation (invisible or bidi characters,
/// words mixing Latin with Cyrillic or Greek). Empty when there are none.
[[nodiscard]] std::vector<std::string> injection_signals(std::string_view source);

/// The text with injected instructions cut out, for extraction: a block between a role tag
/// and its closing tag (`<system>…</system>`, `<|im_start|>…<|im_end|>`, `[INST]…[/INST]`,
/// `<<SYS>>…<</SYS>>`, `[system]…[/system]`, `<instructions>…</instructions>`; an unclosed
/// one to the end of its line) and a line that starts with a role prefix (`system:`,
/// `assistant:`) become a paragraph break, and so does a delimiter (`---END---`,
/// `</message>`…), so that what follows starts a sentence of its own. Text without any of
/// them comes back unchanged. `removed` (optional) receives what was cut, a line each.
[[nodiscard]] std::string cut_injected_blocks(std::string_view text, std::string* removed = nullptr);

/// True when a sentence is an instruction aimed at a model ("Ignore previous instructions
/// and …", "You are now in admin mode", a role tag), also when written with look-alike
/// letters (Cyrillic or Greek, fullwidth forms) or invisible characters in between.
[[nodiscard]] bool is_injected_instruction(std::string_view sentence);

/// Lower-case ASCII of `s` with look-alikes folded (Cyrillic and Greek letters that look
/// Latin, fullwidth forms) and invisible and bidi characters dropped; other characters kept.
[[nodiscard]] std::string fold_lookalikes(std::string_view s);

}  // namespace engram::reading
