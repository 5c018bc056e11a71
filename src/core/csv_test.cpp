#include "core/csv.hpp"

#include <gtest/gtest.h>

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

TEST(Csv, MissingColumnAndShortRowsAreReported) {
  CsvReader csv("x.csv", "a,b\n1\n");
  csv.read_header();
  EXPECT_THROW((void)csv.require_column("c"), InputError);
  ASSERT_TRUE(csv.next());
  EXPECT_THROW((void)csv.get_int(1), InputError);
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
