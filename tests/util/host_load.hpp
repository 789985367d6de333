// Loads the host while a test runs: `threads` threads spinning until the
// object goes (joined in its destructor). For tests that show a result does
// not depend on the host's timing.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace tenact::testing {

class HostLoad {
 public:
  explicit HostLoad(int threads) {
    for (int t = 0; t < threads; ++t)
      spinners_.emplace_back([this] {
        volatile uint64_t spin = 0;
        while (!stop_.load(std::memory_order_relaxed)) spin = spin + 1;
      });
  }
  ~HostLoad() {
    stop_ = true;
    for (auto& t : spinners_) t.join();
  }
  HostLoad(const HostLoad&) = delete;
  HostLoad& operator=(const HostLoad&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> spinners_;
};

}  // namespace tenact::testing
