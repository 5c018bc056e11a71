// The output writers' number formats: written without snprintf since issue #27 (it took a
// tenth of a 1M-job run), they must stay the text snprintf wrote, byte for byte.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdio>
#include <string>

#include "report/outputs.hpp"

namespace ds {
namespace {

std::string printf_seconds(Time t) {
  char buf[64];
  if (t % kSecond == 0)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(t / kSecond));
  else
    std::snprintf(buf, sizeof buf, "%.3f", to_seconds(t));
  return buf;
}

TEST(Outputs, SecondsAreWrittenAsPrintfWroteThem) {
  for (const Time t : {Time{0}, Time{1}, Time{-1}, Time{999}, Time{-999}, Time{1000}, Time{-1000},
                       Time{1001}, Time{-1500}, Time{-500}, Time{123456789012}, Time{-123456789012},
                       (Time{1} << 50) + 7, -(Time{1} << 50) - 7, (Time{1} << 60) + 1})
    EXPECT_EQ(format_seconds(t), printf_seconds(t)) << t;
  EXPECT_EQ(format_seconds(kNever), "");
}

RC_GTEST_PROP(Outputs, AnyTimeIsWrittenAsPrintfWroteIt, ()) {
  const auto t = *rc::gen::oneOf(rc::gen::inRange<Time>(-10'000'000, 10'000'000),
                                 rc::gen::inRange<Time>(-(Time{1} << 55), Time{1} << 55));
  RC_ASSERT(format_seconds(t) == printf_seconds(t));
}

}  // namespace
}  // namespace ds
