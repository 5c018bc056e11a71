#include "core/checked.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "core/error.hpp"

namespace ds {
namespace {

constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
constexpr auto kMin = std::numeric_limits<std::int64_t>::min();

TEST(Checked, AddAndMultiplyReportOverflow) {
  EXPECT_EQ(checked_add(2, 3), 5);
  EXPECT_EQ(checked_add(kMax, 1), std::nullopt);
  EXPECT_EQ(checked_add(kMin, -1), std::nullopt);
  EXPECT_EQ(checked_mul(1'000'000, 1'000'000), 1'000'000'000'000);
  EXPECT_EQ(checked_mul(kMax / 2 + 1, 2), std::nullopt);
}

TEST(Checked, RoundInRangeRefusesWhatAnIntegerCannotHold) {
  EXPECT_EQ(round_in_range(2.5, 0, 10), 3);  // halves away from zero, as llround
  EXPECT_EQ(round_in_range(-2.5, -10, 10), -3);
  EXPECT_EQ(round_in_range(11, 0, 10), std::nullopt);
  EXPECT_EQ(round_in_range(1e300, kMin, kMax), std::nullopt);
  EXPECT_EQ(round_in_range(9223372036854775807.0, kMin, kMax), std::nullopt);  // 2^63
  EXPECT_EQ(round_in_range(-9223372036854775808.0, kMin, kMax), kMin);
  EXPECT_EQ(round_in_range(std::numeric_limits<double>::quiet_NaN(), kMin, kMax), std::nullopt);
  EXPECT_EQ(round_in_range(std::numeric_limits<double>::infinity(), kMin, kMax), std::nullopt);
}

TEST(Checked, SecondsToMilliseconds) {
  EXPECT_EQ(seconds_to_ms(1.2345, 0, kMax), 1235);
  EXPECT_EQ(seconds_to_ms(9e9, 0, kMax), 9'000'000'000'000);
  EXPECT_EQ(seconds_to_ms(1e300, 0, kMax), std::nullopt);
  EXPECT_EQ(seconds_to_ms(-1, 0, kMax), std::nullopt);
}

TEST(Checked, SaturatingTimeStaysAddable) {
  const Time big = saturating_time(1e300);
  EXPECT_TRUE(checked_add(big, big).has_value());
  EXPECT_EQ(saturating_time(-1e300), -big);
  EXPECT_EQ(saturating_time(std::numeric_limits<double>::quiet_NaN()), big);
  EXPECT_EQ(saturating_time(1234.9), 1234);
}

TEST(Quoted, EscapesControlCharactersAndCutsLongInput) {
  EXPECT_EQ(quote_input("a\nb\x01"), "'a\\nb\\x01'");
  EXPECT_EQ(quote_input(std::string(100, 'x'), 4), "'xxxx'... (100 bytes)");
  // A UTF-8 character is not cut in half: "é" is two bytes.
  EXPECT_EQ(quote_input("a\xC3\xA9z", 2), "'a'... (4 bytes)");
}

}  // namespace
}  // namespace ds
