// The CSV reader: every field through every typed getter, and the writer's round trip
// (a record written by append_csv_row reads back as the same fields).
#include <stdexcept>
#include <string>
#include <vector>

#include "core/csv.hpp"
#include "core/limits.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"

namespace {

template <class F>
void quietly(F&& f) {
  try {
    f();
  } catch (const ds::InputError&) {
  }
}

}  // namespace

DEEPSHARE_FUZZ_TARGET(csv) {
  using namespace ds;
  CsvReader csv("fuzz.csv", std::string(reinterpret_cast<const char*>(data), size));
  try {
    csv.read_header();
    (void)csv.header_list();
    while (csv.next()) {
      std::vector<std::string> fields;
      for (std::size_t i = 0; i < csv.size(); ++i) {
        fields.emplace_back(csv.field(i));
        quietly([&] { (void)csv.get_int(i); });
        quietly([&] { (void)csv.get_double(i); });
        quietly([&] { (void)csv.get_int_lenient(i); });
        quietly([&] { (void)csv.get_int_in(i, -5, 100'000, "a count"); });
        quietly([&] { (void)csv.get_double_in(i, 0, 1, "a share"); });
        quietly(
            [&] { (void)csv.get_seconds(i, -limits::kMaxAbsTime, limits::kMaxAbsTime, "a time"); });
      }
      std::string again;
      append_csv_row(again, fields);
      CsvReader back("again.csv", again);
      if (!back.next() || back.size() != fields.size())
        throw std::logic_error("CSV round trip: a record of " + std::to_string(fields.size()) +
                               " fields reads back differently");
      for (std::size_t i = 0; i < fields.size(); ++i)
        if (back.field(i) != fields[i]) throw std::logic_error("CSV round trip: field changed");
    }
  } catch (const InputError&) {
    fuzz::expected_error();
  }
  return 0;
}
