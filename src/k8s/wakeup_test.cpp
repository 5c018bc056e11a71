// When the scheduling loop's next cycle runs (wakeup.hpp).
#include "k8s/wakeup.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace ds::k8s {
namespace {

using std::chrono::milliseconds;

// No change: the wait lasts until `latest`, and says so.
TEST(K8sWakeup, WithoutAChangeTheCycleComesAtTheLatest) {
  Wakeup w;
  const auto t0 = Wakeup::Clock::now();
  EXPECT_FALSE(w.wait(w.changes(), t0, t0 + milliseconds(50)));
  EXPECT_GE(Wakeup::Clock::now() - t0, milliseconds(50));
}

// A change the last cycle may have missed (after `seen`) wakes the next one once `earliest`
// passed, long before `latest`.
TEST(K8sWakeup, AChangeWakesTheNextCycleNoSoonerThanTheGap) {
  Wakeup w;
  const std::uint64_t seen = w.changes();
  w.notify();
  const auto t0 = Wakeup::Clock::now();
  EXPECT_TRUE(w.wait(seen, t0 + milliseconds(30), t0 + milliseconds(60000)));
  const auto took = Wakeup::Clock::now() - t0;
  EXPECT_GE(took, milliseconds(30)) << "the gap holds";
  EXPECT_LT(took, milliseconds(30000)) << "not the latest";
}

// A change while the loop waits wakes it at once.
TEST(K8sWakeup, AChangeWhileWaitingWakesAtOnce) {
  Wakeup w;
  const std::uint64_t seen = w.changes();
  const auto t0 = Wakeup::Clock::now();
  std::jthread watch([&] {
    std::this_thread::sleep_for(milliseconds(20));
    w.notify();
  });
  EXPECT_TRUE(w.wait(seen, t0, t0 + milliseconds(60000)));
  EXPECT_LT(Wakeup::Clock::now() - t0, milliseconds(30000));
  EXPECT_EQ(w.changes(), seen + 1);
}

}  // namespace
}  // namespace ds::k8s
