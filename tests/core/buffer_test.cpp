// Buffers: where they live, who they go back to (exactly once, also after
// their source is gone), the thread's host buffer source, counted memory,
// and tensors over memory the host cannot address.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
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

}  // namespace
}  // namespace tenact
