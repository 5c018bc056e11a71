#include "core/error.hpp"

namespace ds {

std::string SourceLocation::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  // append() rather than operator+: gcc 12 warns falsely (-Wrestrict) on the latter.
  if (line > 0) s.append(":").append(std::to_string(line));
  if (column > 0) s.append(":").append(std::to_string(column));
  return s;
}

}  // namespace ds
