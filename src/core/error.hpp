// Errors for bad input and an expected-like result type.
//
// "Cannot place this job now" is a normal policy outcome and never an Error.
// An Error means bad input (it names the file, line, column and field, and what
// was expected) or a broken invariant.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ds {

struct SourceLocation {
  std::string file;
  long line = 0;    // 1-based; 0 when not applicable
  long column = 0;  // 1-based; 0 when not applicable

  [[nodiscard]] std::string str() const;
};

// Input echoed in a message: in single quotes, control characters escaped (\n, \x01),
// and cut after `max` bytes with the full length noted, so that a message never repeats
// megabytes of a bad file.
std::string quote_input(std::string_view input, std::size_t max = 80);

// Thrown for invalid user input; the CLI prints what() and exits with status 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  InputError(const SourceLocation& where, const std::string& message)
      : std::runtime_error(where.str() + ": " + message) {}
};

}  // namespace ds
