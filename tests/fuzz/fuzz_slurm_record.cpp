// DeepShare's record in a Slurm job's AdminComment (src/slurm/record.hpp): the parser of
// every key the gate and the controller write, with explicit ranges. A record that parses
// must survive being written back: the pin written from it parses to the same pin text.
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "slurm/record.hpp"

namespace {

std::string pin_text(const ds::slurm::Pin& pin) {
  ds::slurm::RecordFields f;
  ds::slurm::write_pin(f, pin);
  return ds::slurm::format_fields(f);
}

}  // namespace

DEEPSHARE_FUZZ_TARGET(slurm_record) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)ds::slurm::has_pin_keys(text);
  (void)ds::slurm::format_fields(ds::slurm::parse_fields(text));
  try {
    const auto record = ds::slurm::parse_record(text);
    if (record && record->pin) {
      const std::string once = pin_text(*record->pin);
      const auto again = ds::slurm::parse_record("ds:v=1;gpus=1;" + once.substr(3));
      if (!again || !again->pin || pin_text(*again->pin) != once) std::abort();  // a codec bug
    }
  } catch (const ds::InputError&) {
    ds::fuzz::expected_error();
  }
  return 0;
}
