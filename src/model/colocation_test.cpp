#include "model/colocation.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace ds {
namespace {
namespace fs = std::filesystem;

const char* kSingles =
    "model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem,label\n"
    "ResNet18,CIFAR-10,32,0,3000.5,45.0,20.0,3000.0,0\n"
    "VGG,ImageNet,64,1,200.0,99.0,70.0,16000.0,2\n";
const char* kPairsHeader =
    ",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,batchsize2,amp2,"
    "speed2,gpu_util,gmem_util,gmem\n";

// A fresh folder per test with the two files.
fs::path write_aux(const std::string& name, const std::string& pairs) {
  const fs::path dir = fs::temp_directory_path() / ("ds_colocation_test_" + name);
  fs::create_directories(dir);
  std::ofstream(dir / "single_data.csv") << kSingles;
  std::ofstream(dir / "colocate_info.csv") << kPairsHeader << pairs;
  return dir;
}

Profile resnet() {
  return Profile{"ResNet18", "CIFAR-10", 32, false};
}
Profile vgg() {
  return Profile{"VGG", "ImageNet", 64, true};
}

TEST(ColocationTable, LoadsAndLooksUpInEitherOrder) {
  const auto dir =
      write_aux("ok",
                "0,ResNet18,CIFAR-10,1,32,0,0.9,VGG,ImageNet,1,64,1,0.6,99.5,80,19000\n"
                "1,ResNet18,CIFAR-10,1,32,0,0.8,ResNet18,CIFAR-10,1,32,0,0.7,70,30,6000\n");
  ASSERT_TRUE(ColocationTable::available(dir.string()));
  const auto t = ColocationTable::load(dir.string());
  ASSERT_EQ(t.pairs().size(), 2u);
  ASSERT_EQ(t.singles().size(), 2u);
  EXPECT_EQ(t.lookup(resnet(), vgg()), std::optional(std::pair(0.9, 0.6)));
  EXPECT_EQ(t.lookup(vgg(), resnet()), std::optional(std::pair(0.6, 0.9)));
  EXPECT_EQ(t.lookup(resnet(), resnet()), std::optional(std::pair(0.8, 0.7)));
  EXPECT_FALSE(t.lookup(vgg(), vgg()).has_value());
  const SingleProfile* s = t.single(vgg());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->share_label, 2);
  EXPECT_DOUBLE_EQ(s->gmem_mib, 16000);
  EXPECT_EQ(t.single(Profile{"VGG", "ImageNet", 64, false}), nullptr);  // AMP is part of the key
  EXPECT_DOUBLE_EQ(t.pairs()[0].gmem_mib, 19000);
  EXPECT_EQ(profile_key(vgg()), "VGG|ImageNet|64|1");
}

TEST(ColocationTable, BadRowNamesFileLineAndColumn) {
  const auto dir =
      write_aux("bad",
                "0,ResNet18,CIFAR-10,1,32,0,0.9,VGG,ImageNet,1,64,1,0.6,99.5,80,19000\n"
                "1,ResNet18,CIFAR-10,1,32,0,fast,VGG,ImageNet,1,64,1,0.6,99.5,80,19000\n");
  try {
    (void)ColocationTable::load(dir.string());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("colocate_info.csv:3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("speed1"), std::string::npos) << msg;
  }
}

TEST(ColocationTable, RejectsNonPositiveSpeedAndBadAmp) {
  const auto zero =
      write_aux("zero", "0,ResNet18,CIFAR-10,1,32,0,0,VGG,ImageNet,1,64,1,0.6,99.5,80,19000\n");
  EXPECT_THROW((void)ColocationTable::load(zero.string()), InputError);
  const auto amp =
      write_aux("amp", "0,ResNet18,CIFAR-10,1,32,2,0.9,VGG,ImageNet,1,64,1,0.6,99.5,80,19000\n");
  EXPECT_THROW((void)ColocationTable::load(amp.string()), InputError);
}

TEST(ColocationTable, MissingFolder) {
  EXPECT_FALSE(ColocationTable::available("/nonexistent/aux"));
  EXPECT_FALSE(ColocationTable::available(""));
  EXPECT_THROW((void)ColocationTable::load("/nonexistent/aux"), InputError);
}

TEST(ColocationTable, FromRowsKeepsTheFirstDuplicate) {
  MeasuredPair p{resnet(), vgg(), 0.9, 0.6, 90, 10000};
  MeasuredPair q{vgg(), resnet(), 0.5, 0.5, 90, 10000};  // same pair, other order: a new key
  MeasuredPair r{resnet(), vgg(), 0.1, 0.1, 90, 10000};  // duplicate of p
  const auto t = ColocationTable::from_rows({p, q, r}, {});
  EXPECT_EQ(t.pairs().size(), 2u);
  EXPECT_EQ(t.lookup(resnet(), vgg()), std::optional(std::pair(0.9, 0.6)));
}

// The real profiles, when the shared data is present.
TEST(ColocationTable, LoadsLucidProfiles) {
  const std::string aux = std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept/aux";
  if (!ColocationTable::available(aux)) GTEST_SKIP() << "no Venus aux/ data at " << aux;
  const auto t = ColocationTable::load(aux);
  EXPECT_EQ(t.pairs().size(), 1388u);
  EXPECT_EQ(t.singles().size(), 66u);
  for (const auto& p : t.pairs()) {
    EXPECT_NE(t.single(p.a), nullptr) << profile_key(p.a);
    EXPECT_NE(t.single(p.b), nullptr) << profile_key(p.b);
  }
}

}  // namespace
}  // namespace ds
