// The CPU engine's memory: buffers it allocates and the results its kernels
// make are its own, in the storage class the op is bound to, counted per
// storage class and back to zero once dropped; inputs the host cannot
// address are refused; host_copy moves values between every pair of
// storage classes of two engines, into buffers the destination owns.
#include <catch2/catch.hpp>

#include <future>

#include "engines/cpu/cpu_engine.hpp"
#include "tests/engines/cpu/batch_launch.hpp"
#include "tests/engines/cpu/test_engine.hpp"
#include "transfer/providers.hpp"

using namespace tenact;
using namespace tenact::cpu;

namespace {

HostTensor f32_iota(int64_t n, float base) {
  auto t = HostTensor::zeros(DType::F32, {n}).value();
  for (int64_t i = 0; i < n; ++i) t.data_as<float>()[i] = base + static_cast<float>(i);
  return t;
}

std::shared_ptr<const PreparedOp> bound_op(OpKind kind, int64_t n, Endpoint at) {
  auto op = std::make_shared<PreparedOp>();
  op->kind = kind;
  op->results = {ValueType{DType::F32, exact_shape({n})}};
  op->binding.endpoint = std::move(at);
  return op;
}

constexpr auto run_batch = &tenact::testing::launch_and_wait;

/// Host memory pretending to be a device's: the host may not read it.
class DeviceLikeMemory final : public BufferAllocator {
 public:
  void release(std::byte* address, size_t) noexcept override { ::operator delete(address); }
};

CpuEngineOptions second_engine() {
  CpuEngineOptions o;
  o.id = "cpu:1";
  o.threads = 2;
  o.storage_classes = {"pinned", "host"};
  return o;
}

CpuEngineOptions first_engine() {
  CpuEngineOptions o;
  o.threads = 2;
  return o;
}

}  // namespace

TEST_CASE("a CPU engine allocates in its own storage classes and counts each", "[cpu_engine][memory]") {
  auto a = test_engine(first_engine());
  auto b = test_engine(second_engine());
  CHECK(b->capabilities().storage_classes == std::vector<std::string>{"pinned", "host"});
  CHECK(b->capabilities().default_storage_class == "pinned");
  {
    auto t = a->allocate("host", DType::F32, {4, 8}).value();
    auto u = b->allocate("pinned", DType::F64, {10}).value();
    CHECK(t.endpoint() == Endpoint{"cpu", "host"});
    CHECK(u.endpoint() == Endpoint{"cpu:1", "pinned"});
    CHECK(a->memory_stats("host").value().allocated_bytes == 128);
    CHECK(b->memory_stats("pinned").value().allocated_bytes == 80);
    CHECK(b->memory_stats("host").value().allocated_bytes == 0);
  }
  for (const char* storage : {"pinned", "host"}) {
    MemoryStats s = b->memory_stats(storage).value();
    CHECK(s.allocated_bytes == 0);
    CHECK(s.allocations == s.releases);
  }
  // The default cache keeps the freed 128-byte block (class 128).
  CHECK(a->memory_stats("host").value() == MemoryStats{0, 128, 128, 1, 1, 128});
  auto missing = a->allocate("pinned", DType::F32, {1});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code() == ErrorCode::Unsupported);
  CHECK(missing.error().message() == "engine 'cpu' has no storage class 'pinned'");
  CHECK(a->memory_stats("device").error().message() == "engine 'cpu' has no storage class 'device'");
}

TEST_CASE("a batch's results are buffers of the storage class its ops are bound to",
          "[cpu_engine][memory]") {
  auto b = test_engine(second_engine());
  const int64_t n = 1000;
  const Endpoint at{"cpu:1", "pinned"};
  {
    BatchWork w;
    w.inputs = {f32_iota(n, 1.0f), f32_iota(n, 0.0f)};  // unowned host memory
    w.ops.push_back({bound_op(OpKind::Multiply, n, at), {BatchRef::input(0), BatchRef::input(1)}});
    w.ops.push_back({bound_op(OpKind::Add, n, at), {BatchRef::op(0), BatchRef::input(0)}});
    w.outputs = {BatchRef::op(1)};
    auto out = run_batch(*b, std::move(w));
    REQUIRE(out.ok());
    REQUIRE(out->size() == 1);
    const Tensor& r = (*out)[0];
    CHECK(r.endpoint() == at);
    for (int64_t i = 0; i < n; ++i) {
      const float x = 1.0f + static_cast<float>(i), y = static_cast<float>(i);
      REQUIRE(r.data_as<float>()[i] == x * y + x);
    }
    MemoryStats held = b->memory_stats("pinned").value();
    CHECK(held.allocated_bytes >= n * 4);  // the output at least is alive
    CHECK(b->memory_stats("host").value().allocations == 0);
  }
  MemoryStats s = b->memory_stats("pinned").value();
  CHECK(s.allocated_bytes == 0);
  CHECK(s.allocations >= 1);
  CHECK(s.allocations == s.releases);
}

TEST_CASE("the CPU engine refuses inputs the host cannot address", "[cpu_engine][memory]") {
  auto a = test_engine(first_engine());
  auto memory = std::make_shared<DeviceLikeMemory>();
  auto* p = static_cast<std::byte*>(::operator new(16));
  auto buffer = Buffer::adopt(p, 16, 16, Endpoint{"dev:0", "device"}, false, memory).value();
  BatchWork w;
  w.inputs = {f32_iota(4, 0.0f), HostTensor::view(buffer, DType::F32, {4}, {1}, 0).value()};
  w.ops.push_back({bound_op(OpKind::Add, 4, {"cpu", "host"}), {BatchRef::input(0), BatchRef::input(1)}});
  w.outputs = {BatchRef::op(0)};
  auto out = run_batch(*a, std::move(w));
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().code() == ErrorCode::InputMismatch);
  CHECK(out.error().message() == "input 1 lives in dev:0/device memory, which CPU engine 'cpu' cannot read");
}

TEST_CASE("host_copy moves a value between every pair of storage classes of two engines",
          "[cpu_engine][memory][transfer]") {
  auto a = test_engine(first_engine());
  auto b = test_engine(second_engine());
  TransferProviders providers;
  struct Place {
    Engine* engine;
    Endpoint at;
  };
  const std::vector<Place> places = {
      {a.get(), {"cpu", "host"}}, {b.get(), {"cpu:1", "pinned"}}, {b.get(), {"cpu:1", "host"}}};
  for (const Place& from : places) {
    for (const Place& to : places) {
      CAPTURE(from.at.to_string(), to.at.to_string());
      auto source = from.engine->allocate(from.at.storage_class, DType::I32, {3, 4}).value();
      for (int i = 0; i < 12; ++i) source.data_as<int32_t>()[i] = 7 * i - 5;
      const int64_t perm[] = {1, 0};
      const Tensor strided = source.transposed(perm);  // [4, 3], not contiguous
      auto moved = providers.run("host_copy", TransferRequest{strided, from.at, to.at, *to.engine});
      REQUIRE(moved.ok());
      CHECK(moved->endpoint() == to.at);
      CHECK(moved->buffer() != source.buffer());
      CHECK(moved->is_contiguous());
      CHECK(moved->shape() == std::vector<int64_t>{4, 3});
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 3; ++c) REQUIRE(moved->data_as<int32_t>()[r * 3 + c] == 7 * (c * 4 + r) - 5);
    }
  }
  for (const Place& p : places) CHECK(p.engine->memory_stats(p.at.storage_class).value().allocated_bytes == 0);
  auto unknown = providers.run("dma", TransferRequest{f32_iota(1, 0.0f), places[0].at, places[1].at, *b});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message() ==
        "no transfer provider 'dma' is registered (route cpu/host -> cpu:1/pinned via dma)");
  auto nowhere = providers.run("host_copy", TransferRequest{f32_iota(1, 0.0f), places[0].at,
                                                            Endpoint{"cpu:1", "device"}, *b});
  REQUIRE_FALSE(nowhere.ok());
  CHECK(nowhere.error().message() ==
        "transfer cpu/host -> cpu:1/device via host_copy: engine 'cpu:1' has no storage class 'device'");
}

TEST_CASE("with its host cache on (the default), a CPU engine keeps freed results for the next run",
          "[cpu_engine][memory][cache]") {
  CpuEngineOptions o = first_engine();
  o.host_cache.enabled = true;
  auto a = test_engine(o);
  const int64_t n = 1000;  // f32[1000]: 4000 bytes, class 4096
  const Endpoint at{"cpu", "host"};
  auto run_once = [&] {
    BatchWork w;
    w.inputs = {f32_iota(n, 1.0f), f32_iota(n, 0.0f)};
    w.ops.push_back({bound_op(OpKind::Multiply, n, at), {BatchRef::input(0), BatchRef::input(1)}});
    w.ops.push_back({bound_op(OpKind::Add, n, at), {BatchRef::op(0), BatchRef::input(0)}});
    w.outputs = {BatchRef::op(1)};
    auto out = run_batch(*a, std::move(w));
    REQUIRE(out.ok());
    const float x = 1.0f + 999.0f, y = 999.0f;
    CHECK((*out)[0].data_as<float>()[999] == x * y + x);
    MemoryStats held = a->memory_stats("host").value();
    CHECK(held.allocated_bytes >= n * 4);
    CHECK(held.reserved_bytes >= held.allocated_bytes);
  };
  run_once();
  MemoryStats first = a->memory_stats("host").value();
  CHECK(first.allocated_bytes == 0);
  CHECK(first.reserved_bytes > 0);
  CHECK(first.reserved_bytes == first.cached_bytes);
  CHECK(first.allocations == first.releases);
  run_once();  // the same sizes again: served from the cache
  MemoryStats second = a->memory_stats("host").value();
  CHECK(second.allocated_bytes == 0);
  CHECK(second.allocations > first.allocations);
  CHECK(second.reserved_bytes == first.reserved_bytes);
  // On by default; off, nothing is held once results are dropped.
  CHECK(CpuEngineOptions{}.host_cache.enabled);
  CpuEngineOptions off = first_engine();
  off.host_cache.enabled = false;
  auto plain = test_engine(off);
  CHECK(plain->allocate("host", DType::F32, {n}).ok());
  CHECK(plain->memory_stats("host").value().reserved_bytes == 0);
}
