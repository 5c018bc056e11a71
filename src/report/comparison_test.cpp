// Tests of the comparison table writer: CSV header and values, Markdown rounding.
#include "report/comparison.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ds {
namespace {

std::vector<ComparisonRow> rows() {
  ComparisonRow a;
  a.policy = "fifo-isolated";
  a.metrics.jobs = 1200;
  a.metrics.jobs_completed = 1199;
  a.metrics.avg_queue_s = 53951.4;
  a.metrics.p99_queue_s = 1234567.8;
  a.metrics.avg_jct_s = 65720.25;
  a.metrics.gpu_occupancy_full = 0.61234;
  a.metrics.gpu_occupancy_submit_window = 0.7;
  a.metrics.gpu_occupancy_lucid = 0.655;
  a.metrics.sm_utilization = 0.5;
  a.metrics.qos_compliance = 0.25;
  a.metrics.jain_fairness = 0.9;
  a.metrics.preemptions = 3;
  a.wall_seconds = 1.5;
  ComparisonRow b = a;
  b.policy = "fifo-pooled";
  b.metrics.avg_queue_s = 12;
  return {a, b};
}

TEST(Comparison, CsvHasHeaderAndOneRowPerPolicy) {
  const std::string csv = comparison_csv(rows());
  std::istringstream in(csv);
  std::string header, first, second, extra;
  std::getline(in, header);
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_FALSE(std::getline(in, extra));
  EXPECT_EQ(header,
            "policy,jobs,completed,avg_queue_s,p50_queue_s,p99_queue_s,p999_queue_s,avg_jct_s,"
            "p99_jct_s,gpu_occupancy_full,gpu_occupancy_submit_window,gpu_occupancy_lucid,"
            "sm_utilization,qos_compliance,jain_fairness,worst_tenant_share,preemptions,"
            "lost_gpu_hours,wall_seconds");
  EXPECT_EQ(first,
            "fifo-isolated,1200,1199,53951.4,0,1.23457e+06,0,65720.2,0,0.61234,0.7,0.655,0.5,0.25,"
            "0.9,0,3,0,1.5");
  EXPECT_EQ(second.substr(0, 29), "fifo-pooled,1200,1199,12,0,1.");
}

TEST(Comparison, ALoadColumnWhenRowsHaveLoads) {
  auto r = rows();
  r[0].load = 1.0;
  r[1].load = 1.25;
  const std::string csv = comparison_csv(r);
  EXPECT_EQ(csv.substr(0, 17), "policy,load,jobs,");
  EXPECT_NE(csv.find("\nfifo-pooled,1.25,1200,"), std::string::npos) << csv;
  EXPECT_NE(comparison_table(r).find("| fifo-pooled | 1.25 | 1,200 |"), std::string::npos);
}

TEST(Comparison, MarkdownRoundsAndSeparatesThousands) {
  const std::string md = comparison_table(rows());
  EXPECT_NE(md.find("| policy | jobs | completed | avg queue (s) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fifo-isolated | 1,200 | 1,199 | 53,951 | 0 | 1,234,568 | 0 | 65,720 | 0 "
                    "| 0.612 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| fifo-pooled | 1,200 | 1,199 | 12 |"), std::string::npos) << md;
}

TEST(Comparison, WritesBothFiles) {
  const auto dir = std::filesystem::temp_directory_path() / "deepshare_comparison_test";
  std::filesystem::remove_all(dir);
  write_comparison((dir / "nested").string(), rows(), "Demo");
  std::ifstream md(dir / "nested" / "comparison.md");
  std::string first;
  std::getline(md, first);
  EXPECT_EQ(first, "# Demo");
  EXPECT_TRUE(std::filesystem::exists(dir / "nested" / "comparison.csv"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ds
