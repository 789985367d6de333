// Buffers: where they live, who they go back to (exactly once, also after
// their source is gone), the thread's host buffer source, counted memory,
// and tensors over memory the host cannot address; the size-class cache of
// a host buffer source ([cache]).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/buffer.hpp"
#include "core/tensor.hpp"

namespace tenact {
namespace {

/// Hands out host memory it pretends is a device's (not host addressable)
/// and counts every release by address: each must come back exactly once.
class FakeDeviceMemory final : public BufferAllocator {
 public:
  Result<std::shared_ptr<Buffer>> allocate(size_t bytes, std::shared_ptr<FakeDeviceMemory> self) {
    auto* p = static_cast<std::byte*>(::operator new(bytes == 0 ? 1 : bytes));
    std::lock_guard<std::mutex> lock(mutex);
    live[p] = bytes;
    return Buffer::adopt(p, bytes, 256, Endpoint{"dev:0", "device"}, false, std::move(self));
  }
  void release(std::byte* address, size_t bytes) noexcept override {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(address);
    if (it == live.end() || it->second != bytes) ++bad_releases;
    else live.erase(it);
    ++releases;
    ::operator delete(address);
  }
  std::mutex mutex;
  std::map<std::byte*, size_t> live;
  int releases = 0;
  int bad_releases = 0;
};

TEST_CASE("a buffer from no source is unowned host memory, aligned and zeroed", "[buffer]") {
  auto b = Buffer::allocate(1000);
  REQUIRE(b.ok());
  CHECK((*b)->endpoint() == Endpoint::unowned_host());
  CHECK((*b)->endpoint().to_string() == "/host");
  CHECK((*b)->host_addressable());
  CHECK((*b)->size() == 1000);
  CHECK((*b)->alignment() == kTensorAlignment);
  CHECK(reinterpret_cast<uintptr_t>((*b)->data()) % kTensorAlignment == 0);
  std::vector<std::byte> zeros(1000);
  CHECK(std::memcmp((*b)->data(), zeros.data(), 1000) == 0);
  auto big = Buffer::allocate(uint64_t{1} << 41);
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().code() == ErrorCode::LimitExceeded);
}

TEST_CASE("a host buffer source counts what is allocated and comes back to zero", "[buffer]") {
  auto source = HostBufferSource::create(Endpoint{"cpu:1", "pinned"});
  {
    auto a = source->allocate(100).value();
    auto b = source->allocate(40u << 20).value();  // mapped, above kMappedBufferBytes
    CHECK(a->endpoint() == Endpoint{"cpu:1", "pinned"});
    CHECK(b->host_addressable());
    MemoryStats s = source->stats();
    CHECK(s.allocated_bytes == 100 + (40u << 20));
    CHECK(s.reserved_bytes == s.allocated_bytes);
    CHECK(s.peak_allocated_bytes == 100 + (40u << 20));
    CHECK(s.allocations == 2);
    CHECK(s.releases == 0);
    b.reset();
    CHECK(source->stats().allocated_bytes == 100);
    auto c = source->allocate(8).value();
    CHECK(source->stats().peak_allocated_bytes == 100 + (40u << 20));  // the peak stays
  }
  MemoryStats s = source->stats();
  CHECK(s.allocated_bytes == 0);
  CHECK(s.allocations == 3);
  CHECK(s.releases == 3);
}

TEST_CASE("a buffer keeps its source alive and goes back to it after the owner let go", "[buffer]") {
  std::shared_ptr<Buffer> survivor;
  std::weak_ptr<HostBufferSource> weak;
  {
    auto source = HostBufferSource::create(Endpoint{"cpu", "host"});
    weak = source;
    survivor = source->allocate(64).value();
  }
  // The engine (the source's owner) is gone; the buffer still holds it.
  REQUIRE_FALSE(weak.expired());
  CHECK(weak.lock()->stats().allocated_bytes == 64);
  survivor.reset();
  CHECK(weak.expired());
}

TEST_CASE("the thread's host buffer source takes Buffer::allocate and tensors, and scopes nest", "[buffer]") {
  auto outer = HostBufferSource::create(Endpoint{"cpu", "host"});
  auto inner = HostBufferSource::create(Endpoint{"cpu:1", "pinned"});
  {
    HostBufferScope a(outer.get());
    auto t = HostTensor::zeros(DType::F32, {4, 4}).value();
    CHECK(t.endpoint() == Endpoint{"cpu", "host"});
    {
      HostBufferScope b(inner.get());
      auto u = t.clone().value();
      CHECK(u.endpoint() == Endpoint{"cpu:1", "pinned"});
      CHECK(inner->stats().allocated_bytes == 64);
      // Another thread has no source installed.
      Endpoint elsewhere;
      std::thread([&] { elsewhere = Buffer::allocate(8).value()->endpoint(); }).join();
      CHECK(elsewhere == Endpoint::unowned_host());
      // allocate_unowned ignores the scope.
      CHECK(Buffer::allocate_unowned(8).value()->endpoint() == Endpoint::unowned_host());
    }
    CHECK(inner->stats().allocated_bytes == 0);
    CHECK(HostTensor::zeros(DType::U8, {3}).value().endpoint() == Endpoint{"cpu", "host"});
    CHECK(outer->stats().allocated_bytes == 64);
  }
  CHECK(outer->stats().allocated_bytes == 0);
  CHECK(HostTensor::zeros(DType::U8, {3}).value().endpoint() == Endpoint::unowned_host());
}

TEST_CASE("sources count correctly when many threads allocate and release at once", "[buffer]") {
  auto source = HostBufferSource::create(Endpoint{"cpu", "host"});
  // Each thread allocates into its own list and releases its neighbour's:
  // buffers are dropped on other threads than the ones that made them,
  // while allocations go on.
  std::vector<std::vector<std::shared_ptr<Buffer>>> made(8);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) made[t].push_back(source->allocate(size_t(1 + i % 7) * 64).value());
      ready.fetch_add(1);
      while (ready.load() < 8) std::this_thread::yield();
      made[(t + 1) % 8].clear();
    });
  for (auto& t : threads) t.join();
  MemoryStats s = source->stats();
  CHECK(s.allocations == 4000);
  CHECK(s.releases == 4000);
  CHECK(s.allocated_bytes == 0);
  CHECK(s.peak_allocated_bytes >= 500 * 4 * 64);
}

TEST_CASE("memory an allocator adopted goes back to it exactly once", "[buffer]") {
  auto device = std::make_shared<FakeDeviceMemory>();
  {
    auto b = device->allocate(128, device).value();
    std::shared_ptr<Buffer> c = b;  // a second user
    CHECK(b->endpoint().to_string() == "dev:0/device");
    CHECK_FALSE(b->host_addressable());
    CHECK(b->alignment() == 256);
    b.reset();
    CHECK(device->releases == 0);
  }
  CHECK(device->releases == 1);
  CHECK(device->bad_releases == 0);
  CHECK(device->live.empty());
}

TEST_CASE("a tensor over memory the host cannot address is never read on the host", "[buffer]") {
  auto device = std::make_shared<FakeDeviceMemory>();
  auto buffer = device->allocate(4 * sizeof(float), device).value();
  auto t = HostTensor::view(buffer, DType::F32, {4}, {1}, 0).value();
  CHECK_FALSE(t.is_host());
  CHECK(t.endpoint() == Endpoint{"dev:0", "device"});
  auto copy = t.clone();
  REQUIRE_FALSE(copy.ok());
  CHECK(copy.error().code() == ErrorCode::Internal);
  CHECK(copy.error().message() ==
        "host copy of a tensor in dev:0/device memory, which the host cannot address");
}

TEST_CASE("a source with a capacity refuses what would not fit, naming its endpoint, and keeps serving",
          "[buffer]") {
  auto device = HostBufferSource::create(Endpoint{"sim:0", "device"}, {}, HostSourceLimits{1000});
  auto a = device->allocate(600);
  REQUIRE(a.ok());
  CHECK((*a)->endpoint() == Endpoint{"sim:0", "device"});
  auto b = device->allocate(401);  // 600 + 401 > 1000
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().code() == ErrorCode::LimitExceeded);
  CHECK_THAT(b.error().message(), Catch::Contains("sim:0/device") && Catch::Contains("401 bytes asked for") &&
                                      Catch::Contains("600 of 1000 in use"));
  CHECK(device->stats().allocated_bytes == 600);  // the refusal counted nothing
  CHECK(device->stats().allocations == 1);
  auto c = device->allocate(400);  // exactly full
  REQUIRE(c.ok());
  CHECK(device->stats().peak_allocated_bytes == 1000);
  // Far past the capacity (and past what the heap would give): refused by
  // the capacity, before any memory is asked for.
  auto huge = device->allocate(size_t{1} << 39);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().code() == ErrorCode::LimitExceeded);
  a->reset();
  auto d = device->allocate(600);  // room again once a buffer went back
  REQUIRE(d.ok());
  d->reset();
  c->reset();
  CHECK(device->stats().allocated_bytes == 0);
  CHECK(device->stats().releases == 3);
}

TEST_CASE("copy_to_dense writes a strided view in row-major order", "[buffer]") {
  auto t = HostTensor::zeros(DType::I32, {2, 3}).value();
  for (int i = 0; i < 6; ++i) t.data_as<int32_t>()[i] = i;  // [[0 1 2] [3 4 5]]
  const int64_t perm[] = {1, 0};
  auto transposed = t.transposed(perm);  // [[0 3] [1 4] [2 5]]
  int32_t out[6] = {};
  REQUIRE(transposed.copy_to_dense(reinterpret_cast<std::byte*>(out)).ok());
  const int32_t expected[6] = {0, 3, 1, 4, 2, 5};
  CHECK(std::equal(out, out + 6, expected));
}

// -- the size-class cache -----------------------------------------------------

HostCacheOptions cache_on(uint64_t max_cached_bytes = uint64_t{256} << 20,
                          size_t max_cached_block = kMappedBufferBytes) {
  HostCacheOptions o;
  o.enabled = true;
  o.max_cached_bytes = max_cached_bytes;
  o.max_cached_block = max_cached_block;
  return o;
}

bool all_zero(const std::byte* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != std::byte{0}) return false;
  return true;
}

TEST_CASE("size classes: 64-byte steps up to 256, then four per power of two", "[buffer][cache]") {
  CHECK(host_cache_class_bytes(0) == 64);
  CHECK(host_cache_class_bytes(1) == 64);
  CHECK(host_cache_class_bytes(64) == 64);
  CHECK(host_cache_class_bytes(65) == 128);
  CHECK(host_cache_class_bytes(200) == 256);
  CHECK(host_cache_class_bytes(257) == 320);
  CHECK(host_cache_class_bytes(449) == 512);
  CHECK(host_cache_class_bytes(513) == 640);
  CHECK(host_cache_class_bytes(1000) == 1024);
  CHECK(host_cache_class_bytes(5000) == 5120);
  CHECK(host_cache_class_bytes(uint64_t{3} << 20) == uint64_t{3} << 20);
  CHECK(host_cache_class_bytes((uint64_t{3} << 20) + 1) == uint64_t{7} << 19);
  CHECK(host_cache_class_bytes(kMaxTensorBytes) == kMaxTensorBytes);
  for (uint64_t bytes = 1; bytes < (uint64_t{1} << 22); bytes = bytes * 3 / 2 + 1) {
    const uint64_t c = host_cache_class_bytes(bytes);
    CAPTURE(bytes, c);
    CHECK(c >= bytes);
    CHECK(c % kTensorAlignment == 0);
    CHECK((c - bytes < 64 || (c - bytes) * 4 < c));  // under a quarter wasted
  }
}

TEST_CASE("a caching source hands a freed block out again, zero-filled", "[buffer][cache]") {
  auto source = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on());
  auto a = source->allocate(1000).value();
  std::byte* const address = a->data();
  std::memset(address, 0xAB, 1000);
  a.reset();
  auto b = source->allocate(970).value();  // the same class (1024)
  CHECK(b->data() == address);
  CHECK(b->size() == 970);
  CHECK(b->endpoint() == Endpoint{"cpu", "host"});
  // Zeroed over its size rounded up to kTensorAlignment (1024 here).
  CHECK(all_zero(b->data(), 1024));
  std::memset(b->data(), 0xCD, 970);
  b.reset();
  // Another class does not take it: 1100 is of class 1280.
  auto c = source->allocate(1100).value();
  CHECK(c->data() != address);
  CHECK(all_zero(c->data(), 1100));
  // A large class (3 MiB) is reused and re-zeroed too.
  auto big = source->allocate(size_t{3} << 20).value();
  std::byte* const big_address = big->data();
  std::memset(big_address, 0x5A, size_t{3} << 20);
  big.reset();
  auto again = source->allocate((size_t{3} << 20) - 100).value();
  CHECK(again->data() == big_address);
  CHECK(all_zero(again->data(), (size_t{3} << 20) - 64));
}

TEST_CASE("an Unspecified allocation reuses a freed block as it is and counts as any other",
          "[buffer][cache]") {
  auto source = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on());
  auto a = source->allocate(1000).value();
  std::byte* const address = a->data();
  std::memset(address, 0xAB, 1000);
  a.reset();
  // The same class, no memset: the earlier bytes are still there (past
  // the first few, where the free list kept its link).
  auto b = source->allocate(990, BufferFill::Unspecified).value();
  CHECK(b->data() == address);
  CHECK(b->size() == 990);
  CHECK(b->data()[64] == std::byte{0xAB});
  CHECK(b->data()[989] == std::byte{0xAB});
  CHECK(source->stats().allocated_bytes == 990);
  b.reset();
  // A zero-filled request after it is zeroed again.
  auto c = source->allocate(1000).value();
  CHECK(c->data() == address);
  CHECK(all_zero(c->data(), 1000));
  c.reset();
  // Over the cap of the cache (bypassing it) and without a source, an
  // Unspecified buffer is still a usable buffer of the size asked for.
  auto big = source->allocate(40u << 20, BufferFill::Unspecified).value();
  CHECK(big->size() == (40u << 20));
  std::memset(big->data(), 1, big->size());
  auto unowned = Buffer::allocate_unowned(100, BufferFill::Unspecified).value();
  CHECK(unowned->size() == 100);
  big.reset();
  CHECK(source->stats().allocated_bytes == 0);
  CHECK(source->stats().allocations == source->stats().releases);
}

TEST_CASE("Tensor::for_overwrite gives a dense row-major tensor of the shape asked for",
          "[buffer][cache]") {
  auto source = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on());
  HostBufferScope scope(source.get());
  auto t = Tensor::for_overwrite(DType::F64, {3, 4}).value();
  CHECK(t.shape() == std::vector<int64_t>{3, 4});
  CHECK(t.strides() == std::vector<int64_t>{4, 1});
  CHECK(t.buffer()->size() == 96);
  CHECK(t.endpoint() == Endpoint{"cpu", "host"});
  CHECK(source->stats().allocated_bytes == 96);
  auto bad = Tensor::for_overwrite(DType::F32, {-1});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == Tensor::zeros(DType::F32, {-1}).error().code());
}

TEST_CASE("a caching source counts allocated, reserved, cached and peak bytes exactly",
          "[buffer][cache]") {
  auto source = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on());
  // Classes: 100 -> 128, 1000 and 900 -> 1024, 5000 -> 5120, 0 -> 64, 120 -> 128.
  auto a = source->allocate(100).value();
  auto b = source->allocate(1000).value();
  auto c = source->allocate(5000).value();
  CHECK(source->stats() == MemoryStats{6100, 6272, 6100, 3, 0, 0});
  b.reset();
  CHECK(source->stats() == MemoryStats{5100, 6272, 6100, 3, 1, 1024});
  auto d = source->allocate(900).value();  // b's block
  CHECK(source->stats() == MemoryStats{6000, 6272, 6100, 4, 1, 0});
  c.reset();
  a.reset();
  CHECK(source->stats() == MemoryStats{900, 6272, 6100, 4, 3, 5248});
  auto e = source->allocate(0).value();    // a fresh 64
  auto f = source->allocate(120).value();  // a's block
  CHECK(source->stats() == MemoryStats{1020, 6336, 6100, 6, 3, 5120});
  source->trim();
  CHECK(source->stats() == MemoryStats{1020, 1216, 6100, 6, 3, 0});
  d.reset();
  e.reset();
  f.reset();
  CHECK(source->stats() == MemoryStats{0, 1216, 6100, 6, 6, 1216});
}

TEST_CASE("a caching source keeps at most max_cached_bytes", "[buffer][cache]") {
  auto source = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on(4096));
  std::vector<std::shared_ptr<Buffer>> alive;
  for (int i = 0; i < 10; ++i) alive.push_back(source->allocate(1000).value());
  CHECK(source->stats().reserved_bytes == 10 * 1024);
  alive.clear();  // four fit in 4096; six go back to the heap
  CHECK(source->stats().reserved_bytes == 4096);
  CHECK(source->stats().cached_bytes == 4096);
  {
    auto x = source->allocate(3000).value();  // class 3072, none cached
    CHECK(source->stats().reserved_bytes == 4096 + 3072);
  }
  CHECK(source->stats().reserved_bytes == 4096);  // 3072 more would pass the cap
  // Random traffic: reserved stays between the alive class bytes and that
  // plus the cap, the difference being what is cached.
  std::mt19937 rng(7);
  std::vector<std::shared_ptr<Buffer>> slots(32);
  uint64_t alive_class = 0;
  for (int i = 0; i < 4000; ++i) {
    auto& slot = slots[rng() % slots.size()];
    if (slot) {
      alive_class -= host_cache_class_bytes(slot->size());
      slot.reset();
    } else {
      slot = source->allocate(1 + rng() % 3000).value();
      alive_class += host_cache_class_bytes(slot->size());
    }
    const MemoryStats s = source->stats();
    REQUIRE(s.reserved_bytes == alive_class + s.cached_bytes);
    REQUIRE(s.cached_bytes <= 4096);
  }
}

TEST_CASE("blocks whose class is above max_cached_block bypass the cache", "[buffer][cache]") {
  auto source = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on());
  {
    auto big = source->allocate(40u << 20).value();  // above kMappedBufferBytes
    CHECK(source->stats().reserved_bytes == 40u << 20);  // as asked, not a class
    CHECK(big->host_addressable());
  }
  CHECK(source->stats() == MemoryStats{0, 0, 40u << 20, 1, 1, 0});

  auto small = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on(uint64_t{1} << 20, 1000));
  small->allocate(1000).value().reset();  // class 1024 > 1000: bypasses
  small->allocate(850).value().reset();   // class 896: cached
  CHECK(small->stats() == MemoryStats{0, 896, 1000, 2, 2, 896});
}

TEST_CASE("trim gives every cached block back, leaving the alive class bytes", "[buffer][cache]") {
  auto source = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on());
  std::vector<std::shared_ptr<Buffer>> alive, dropped;
  const size_t kept[] = {10, 300, 4000, 70000}, let_go[] = {50, 600, 9000, size_t{1} << 20};
  for (size_t bytes : kept) alive.push_back(source->allocate(bytes).value());
  for (size_t bytes : let_go) dropped.push_back(source->allocate(bytes).value());
  const uint64_t alive_class = 64 + 320 + 4096 + 81920;
  dropped.clear();
  const uint64_t cached = 64 + 640 + 10240 + (1u << 20);
  CHECK(source->stats().cached_bytes == cached);
  CHECK(source->stats().reserved_bytes == alive_class + cached);
  source->trim();
  CHECK(source->stats().cached_bytes == 0);
  CHECK(source->stats().reserved_bytes == alive_class);
  alive.pop_back();  // cached again after a trim
  CHECK(source->stats().cached_bytes == 81920);
  CHECK(source->stats().reserved_bytes == alive_class);
  source->trim();
  CHECK(source->stats().reserved_bytes == 64 + 320 + 4096);
}

TEST_CASE("a caching source stays exact when 4 threads allocate and release at random",
          "[buffer][cache]") {
  // A 1 MiB cap, so that both the cached and the over-the-cap paths run.
  auto source = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on(uint64_t{1} << 20));
  constexpr int kThreads = 4, kOps = 10000;
  std::mutex mailbox_mutex;
  std::vector<std::shared_ptr<Buffer>> mailbox;  // buffers dropped on another thread
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) + 1);
      std::vector<std::shared_ptr<Buffer>> slots(16);
      for (int i = 0; i < kOps; ++i) {
        auto& slot = slots[rng() % slots.size()];
        if (slot && i % 8 == 0) {
          std::lock_guard<std::mutex> lock(mailbox_mutex);
          mailbox.push_back(std::move(slot));
        } else if (slot) {
          slot.reset();
        } else {
          const size_t bytes = rng() % (size_t{1} << (rng() % 17));
          auto b = source->allocate(bytes);
          if (!b.ok()) {
            ++bad;
            continue;
          }
          slot = std::move(*b);
          if (bytes > 0 && (slot->data()[0] != std::byte{0} || slot->data()[bytes - 1] != std::byte{0})) ++bad;
          if (bytes > 0) std::memset(slot->data(), 0xEE, bytes);
        }
        if (i % 64 == 0) {
          std::vector<std::shared_ptr<Buffer>> taken;
          std::lock_guard<std::mutex> lock(mailbox_mutex);
          taken.swap(mailbox);  // dropped here, outside the lock
        }
      }
    });
  for (auto& t : threads) t.join();
  mailbox.clear();
  const MemoryStats s = source->stats();
  CHECK(bad.load() == 0);
  CHECK(s.allocated_bytes == 0);
  CHECK(s.allocations == s.releases);
  CHECK(s.allocations > 0);
  CHECK(s.reserved_bytes == s.cached_bytes);
  CHECK(s.cached_bytes <= uint64_t{1} << 20);
}

TEST_CASE("a buffer outliving its caching source's owners still goes back to it", "[buffer][cache]") {
  std::shared_ptr<Buffer> survivor;
  std::weak_ptr<HostBufferSource> weak;
  {
    auto source = HostBufferSource::create(Endpoint{"cpu", "host"}, cache_on());
    weak = source;
    source->allocate(500).value().reset();  // a cached 512
    survivor = source->allocate(100).value();
  }
  REQUIRE_FALSE(weak.expired());
  CHECK(weak.lock()->stats() == MemoryStats{100, 640, 500, 2, 1, 512});
  // The last buffer goes back into the cache, and the source, now
  // unreferenced, gives the cache back to the heap (valgrind sees no leak).
  survivor.reset();
  CHECK(weak.expired());
}

}  // namespace
}  // namespace tenact
