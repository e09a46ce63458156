// UTF-8 checks and repairs for text that leaves a process: JSON answers,
// stored error messages, log lines and terminal output must be valid UTF-8
// even when they quote untrusted input. RFC 3629: no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace charkit::core {

/// Length (1–4) of the valid UTF-8 sequence that starts at s[i]; 0 when the
/// bytes there are not one (a stray continuation byte, a truncated or
/// overlong sequence, a surrogate, a code point above U+10FFFF). i < s.size().
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

/// True when the whole of s is valid UTF-8.
bool is_valid_utf8(std::string_view s);

/// s with every byte that is not part of a valid sequence replaced by
/// U+FFFD (one replacement per invalid byte); s itself when already valid.
std::string to_valid_utf8(std::string_view s);

/// The longest prefix of s of at most max_bytes bytes that does not cut a
/// multi-byte sequence in two (invalid bytes count as one-byte units).
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

/// s for a terminal or a log line: control bytes (but '\n' when
/// keep_newlines) and bytes that are not valid UTF-8 written as \xHH, so a
/// crafted name cannot move a cursor or break a log collector's decoder.
std::string printable(std::string_view s, bool keep_newlines = false);

/// A short quotation of untrusted text for an error message: at most
/// max_bytes bytes of s (cut at a character boundary, "..." appended when
/// cut) in single quotes, control bytes and invalid bytes written as \xHH.
/// Always valid UTF-8 and free of control characters.
std::string quote_excerpt(std::string_view s, std::size_t max_bytes = 40);

}  // namespace charkit::core
