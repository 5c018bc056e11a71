#include "core/error.hpp"

#include <cstdio>

namespace ds {

std::string SourceLocation::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  // append() rather than operator+: gcc 12 warns falsely (-Wrestrict) on the latter.
  if (line > 0) s.append(":").append(std::to_string(line));
  if (column > 0) s.append(":").append(std::to_string(column));
  return s;
}

std::string quote_input(std::string_view input, std::size_t max) {
  std::string out = "'";
  std::size_t n = input.size() > max ? max : input.size();
  // Cut at a UTF-8 character boundary, not inside a character.
  while (n < input.size() && n > 0 && (static_cast<unsigned char>(input[n]) & 0xC0) == 0x80) --n;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(input[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (n < input.size()) out.append("... (").append(std::to_string(input.size())).append(" bytes)");
  return out;
}

}  // namespace ds
