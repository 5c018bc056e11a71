#include "core/csv.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "core/limits.hpp"

namespace ds {
namespace {

TEST(Csv, ReadsHeaderAndTypedFields) {
  CsvReader csv("t.csv", "a,b,c\n1,2.5,x\n-3,4,\n");
  csv.read_header();
  ASSERT_EQ(csv.header().size(), 3u);
  EXPECT_EQ(csv.require_column("b"), 1u);
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.get_int(0), 1);
  EXPECT_DOUBLE_EQ(csv.get_double(1), 2.5);
  EXPECT_EQ(csv.field(2), "x");
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.get_int(0), -3);
  EXPECT_TRUE(csv.empty_field(2));
  EXPECT_FALSE(csv.next());
}

TEST(Csv, QuotedFieldsWithCommasQuotesAndNewlines) {
  CsvReader csv("t.csv",
                "id,nodes\r\n7,\"[{0: [0, 1]}, {1: \"\"x\"\"}]\"\r\n8,\"two\nlines\"\n9,z\n");
  csv.read_header();
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.field(1), "[{0: [0, 1]}, {1: \"x\"}]");
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.field(1), "two\nlines");
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.line(), 5);  // the quoted newline advanced the line count
  EXPECT_EQ(csv.field(1), "z");
}

TEST(Csv, ErrorsNameFileLineColumnAndField) {
  CsvReader csv("jobs.csv", "job_id,gpu_num\n1,4\n2,four\n");
  csv.read_header();
  ASSERT_TRUE(csv.next());
  ASSERT_TRUE(csv.next());
  try {
    (void)csv.get_int(1);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "jobs.csv:3:3: field 'gpu_num': expected an integer, got 'four'");
  }
}

TEST(Csv, MissingColumnIsReported) {
  CsvReader csv("x.csv", "a,b\n1,2\n");
  csv.read_header();
  EXPECT_THROW((void)csv.require_column("c"), InputError);
}

std::string error_of(CsvReader& csv) {
  try {
    while (csv.next()) {
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Csv, RowsWithMoreOrFewerFieldsThanTheHeaderAreErrors) {
  CsvReader more("j.csv", "job_id,tenant,gpus\nj1,teamA,1,5\n");
  more.read_header();
  EXPECT_EQ(error_of(more),
            "j.csv:2:12: row has 4 fields, the header has 3 (a value with a comma, such as a "
            "decimal comma, must be quoted: \"1,5\")");
  CsvReader fewer("j.csv", "job_id,tenant,gpus\nj1,teamA,1\nj2,teamB\n");
  fewer.read_header();
  EXPECT_EQ(error_of(fewer), "j.csv:3: row has 2 fields, the header has 3");
  CsvReader quoted_ok("j.csv", "a,b\n\"1,5\",2\n");
  quoted_ok.read_header();
  ASSERT_TRUE(quoted_ok.next());
  EXPECT_EQ(quoted_ok.field(0), "1,5");
}

TEST(Csv, AColumnNamedTwiceIsAnError) {
  CsvReader csv("h.csv", "a,b,a\n1,2,3\n");
  try {
    csv.read_header();
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "h.csv:1:5: column 'a' appears twice in the header (columns 1 and 3)");
  }
}

TEST(Csv, AQuoteInsideAnUnquotedFieldIsAnError) {
  CsvReader csv("q.csv", "a,b\nx\"y,2\n");
  csv.read_header();
  try {
    csv.next();
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("q.csv:2:2: a double quote inside an unquoted field"),
              std::string::npos)
        << e.what();
  }
  CsvReader ok("q.csv", "a,b\n\"x\"\"y\",2\n");  // the RFC 4180 way
  ok.read_header();
  ASSERT_TRUE(ok.next());
  EXPECT_EQ(ok.field(0), "x\"y");
}

TEST(Csv, RangedGettersNameTheRange) {
  CsvReader csv("r.csv", "gpus,t,m\n3000000000,9e9,1.5\n4.0,-1,0.25\n");
  csv.read_header();
  ASSERT_TRUE(csv.next());
  try {
    (void)csv.get_int_in(0, 0, 100000, "a GPU count");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "r.csv:2:1: field 'gpus': expected a GPU count in 0..100000, got '3000000000'");
  }
  EXPECT_EQ(csv.get_seconds(1, 0, limits::kMaxDuration, "a duration"), 9'000'000'000'000);
  EXPECT_THROW((void)csv.get_double_in(2, 0, 1, "a share"), InputError);
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.get_int_in(0, 0, 8, "a GPU count"), 4);  // lenient: a whole decimal
  EXPECT_THROW((void)csv.get_int_in(0, 0, 8, "a GPU count", /*lenient=*/false), InputError);
  try {
    (void)csv.get_seconds(1, 0, limits::kMaxDuration, "a duration");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "r.csv:3:5: field 't': expected a duration in seconds, 0..10000000000, got '-1'");
  }
  EXPECT_DOUBLE_EQ(csv.get_double_in(2, 0, 1, "a share"), 0.25);
}

TEST(Csv, SecondsBeyondInt64AreRangeErrorsNotUndefinedBehaviour) {
  CsvReader csv("s.csv", "t\n1e300\n9223372036854775807\n");
  csv.read_header();
  while (csv.next())
    EXPECT_THROW((void)csv.get_seconds(0, -limits::kMaxAbsTime, limits::kMaxAbsTime, "a time"),
                 InputError);
}

TEST(Csv, MessagesCutHugeValues) {
  const std::string huge(10'000'000, 'x');
  CsvReader csv("big.csv", "n\n" + huge + "\n");
  csv.read_header();
  ASSERT_TRUE(csv.next());
  try {
    (void)csv.get_int(0);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 200u);
    EXPECT_NE(std::string(e.what()).find("... (10000000 bytes)"), std::string::npos) << e.what();
  }
}

TEST(CsvWriter, QuotesOnlyWhatNeedsIt) {
  std::string out;
  append_csv_row(out, {"plain", "a,b", "say \"hi\"", "two\nlines", "", "cr\r"});
  EXPECT_EQ(out, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",,\"cr\r\"\n");
  out.clear();
  append_csv_row(out, {""});
  EXPECT_EQ(out, "\"\"\n");
}

// What the project writes, its own reader reads back exactly (RFC 4180 both ways).
RC_GTEST_PROP(CsvWriter, RoundTripsEveryTable, ()) {
  const auto width = *rc::gen::inRange<std::size_t>(1, 6);
  const auto text = rc::gen::oneOf(
      rc::gen::arbitrary<std::string>(),
      rc::gen::container<std::string>(rc::gen::element('a', ',', '"', '\n', '\r', ' ', 'x')));
  const auto rows = *rc::gen::container<std::vector<std::vector<std::string>>>(
      rc::gen::container<std::vector<std::string>>(width, text));
  std::vector<std::string> header;
  for (std::size_t i = 0; i < width; ++i) header.push_back("c" + std::to_string(i));
  std::string file;
  append_csv_row(file, header);
  for (const auto& r : rows) append_csv_row(file, r);
  CsvReader csv("p.csv", file);
  csv.read_header();
  RC_ASSERT(csv.header() == header);
  for (const auto& r : rows) {
    RC_ASSERT(csv.next());
    std::vector<std::string> got;
    for (std::size_t i = 0; i < csv.size(); ++i) got.emplace_back(csv.field(i));
    RC_ASSERT(got == r);
  }
  RC_ASSERT(!csv.next());
}

TEST(Csv, UnterminatedQuoteIsAnError) {
  CsvReader csv("q.csv", "a\n\"open\n");
  csv.read_header();
  EXPECT_THROW(csv.next(), InputError);
}

TEST(Csv, SkipsBlankLinesAndBom) {
  CsvReader csv("b.csv",
                "\xEF\xBB\xBF"
                "a\n\n1\n\r\n2");
  csv.read_header();
  EXPECT_EQ(csv.header()[0], "a");
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.get_int(0), 1);
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.get_int(0), 2);
  EXPECT_FALSE(csv.next());
}

TEST(Csv, LenientIntegersAcceptWholeDecimals) {
  CsvReader csv("l.csv", "t\n13229141.0\n1.5\n");
  csv.read_header();
  ASSERT_TRUE(csv.next());
  EXPECT_EQ(csv.get_int_lenient(0), 13229141);
  ASSERT_TRUE(csv.next());
  EXPECT_THROW((void)csv.get_int_lenient(0), InputError);
}

}  // namespace
}  // namespace ds
