// allocator_bench: what one allocate + release pair of a host buffer costs,
// through a caching HostBufferSource, an uncached one and plain
// std::aligned_alloc + std::memset + free, at 256 B, 4 KiB, 64 KiB and
// 1 MiB, all measured in the same run (bench/README.md).
//
// Each figure is one buffer allocated (zero-filled) and dropped at once, as
// an op-by-op run does with a result a later op consumed: the cached source
// then serves every pair but the first from its free list.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.hpp"
#include "core/buffer.hpp"

using namespace tenact;
using namespace tenact::bench;

namespace {

/// Keeps the compiler from dropping a plain allocation it could prove unused.
void consume(std::byte* p) { asm volatile("" : : "r"(p) : "memory"); }

Variant source_pairs(HostBufferSource& source, size_t bytes, int pairs) {
  return [&source, bytes, pairs]() -> Status {
    for (int i = 0; i < pairs; ++i) {
      TENACT_ASSIGN_OR_RETURN(auto buffer, source.allocate(bytes));
      consume(buffer->data());
    }
    return Status{};
  };
}

/// Mixed traffic: kMixed buffers of the kMixedSizes alive at once, then
/// dropped oldest first, `rounds` times.
constexpr size_t kMixedSizes[] = {256, 4096, 1000, 65536, 300, 1 << 20, 16384, 4000};
constexpr int kMixed = 16;

Variant source_mixed(HostBufferSource& source, int rounds) {
  return [&source, rounds]() -> Status {
    std::vector<std::shared_ptr<Buffer>> alive;
    alive.reserve(kMixed);
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0; i < kMixed; ++i) {
        TENACT_ASSIGN_OR_RETURN(auto buffer, source.allocate(kMixedSizes[i % std::size(kMixedSizes)]));
        alive.push_back(std::move(buffer));
      }
      alive.clear();
    }
    return Status{};
  };
}

Variant plain_mixed(int rounds) {
  return [rounds]() -> Status {
    std::byte* alive[kMixed];
    for (int r = 0; r < rounds; ++r) {
      for (int i = 0; i < kMixed; ++i) {
        const size_t bytes = kMixedSizes[i % std::size(kMixedSizes)];
        const size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
        alive[i] = static_cast<std::byte*>(std::aligned_alloc(kTensorAlignment, rounded));
        if (alive[i] == nullptr) return Error{ErrorCode::ResourceExhausted, "aligned_alloc failed"};
        std::memset(alive[i], 0, bytes);
        consume(alive[i]);
      }
      for (std::byte* p : alive) std::free(p);
    }
    return Status{};
  };
}

Variant plain_pairs(size_t bytes, int pairs) {
  return [bytes, pairs]() -> Status {
    for (int i = 0; i < pairs; ++i) {
      auto* p = static_cast<std::byte*>(std::aligned_alloc(kTensorAlignment, bytes));
      if (p == nullptr) return Error{ErrorCode::ResourceExhausted, "aligned_alloc failed"};
      std::memset(p, 0, bytes);
      consume(p);
      std::free(p);
    }
    return Status{};
  };
}

std::string size_name(size_t bytes) {
  if (bytes >= (size_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") options.quick = true;
    else if (arg == "--median") options.statistic = Statistic::Median;
    else {
      std::fprintf(stderr, "usage: allocator_bench [--quick] [--median]\n");
      return 2;
    }
  }
  HostCacheOptions on;
  on.enabled = true;
  auto cached = HostBufferSource::create(Endpoint{"bench", "cached"}, on);
  auto uncached = HostBufferSource::create(Endpoint{"bench", "uncached"});

  Table table;
  const size_t sizes[] = {256, 4096, 64 * 1024, 1024 * 1024};
  for (size_t bytes : sizes) {
    // About the same bytes zeroed per round at every size (~64 MiB), at
    // least 200 pairs.
    const int pairs = static_cast<int>(std::max<size_t>(200, std::min<size_t>(100000, (size_t{64} << 20) / bytes)));
    const Variant variants[] = {source_pairs(*cached, bytes, pairs), source_pairs(*uncached, bytes, pairs),
                                plain_pairs(bytes, pairs)};
    auto samples = run_interleaved(options.reps(20), variants);
    if (!samples.ok()) {
      std::fprintf(stderr, "allocator_bench: %s\n", samples.error().message().c_str());
      return 1;
    }
    const double ns[3] = {(*samples)[0].pick(options.statistic) * 1e9 / pairs,
                          (*samples)[1].pick(options.statistic) * 1e9 / pairs,
                          (*samples)[2].pick(options.statistic) * 1e9 / pairs};
    char note[160];
    std::snprintf(note, sizeof note, "ratio: to plain; uncached/cached = %.2fx (%d pairs)", ns[1] / ns[0],
                  pairs);
    const std::string name = size_name(bytes);
    table.add({name + " cached source", ns[0], "ns/pair", ns[0] / ns[2], {}, false, note});
    table.add({name + " uncached source", ns[1], "ns/pair", ns[1] / ns[2], {}, false, "ratio: to plain"});
    table.add({name + " aligned_alloc+memset+free", ns[2], "ns/pair", 1.0, {}, false, "the baseline"});
  }
  {
    const int rounds = 100;
    const Variant variants[] = {source_mixed(*cached, rounds), source_mixed(*uncached, rounds),
                                plain_mixed(rounds)};
    auto samples = run_interleaved(options.reps(20), variants);
    if (!samples.ok()) {
      std::fprintf(stderr, "allocator_bench: %s\n", samples.error().message().c_str());
      return 1;
    }
    const double pairs = double{rounds} * kMixed;
    const double ns[3] = {(*samples)[0].pick(options.statistic) * 1e9 / pairs,
                          (*samples)[1].pick(options.statistic) * 1e9 / pairs,
                          (*samples)[2].pick(options.statistic) * 1e9 / pairs};
    char note[160];
    std::snprintf(note, sizeof note, "16 alive of 256 B..1 MiB; ratio: to plain; uncached/cached = %.2fx",
                  ns[1] / ns[0]);
    table.add({"mixed cached source", ns[0], "ns/pair", ns[0] / ns[2], {}, false, note});
    table.add({"mixed uncached source", ns[1], "ns/pair", ns[1] / ns[2], {}, false, "ratio: to plain"});
    table.add({"mixed aligned_alloc+memset+free", ns[2], "ns/pair", 1.0, {}, false, "the baseline"});
  }
  std::printf("allocator_bench (%s of %d rounds; ns per allocate + release pair; lower is better)\n",
              statistic_name(options.statistic), options.reps(20));
  table.print(stdout);
  const MemoryStats s = cached->stats();
  std::printf("cached source at the end: reserved %llu bytes, cached %llu bytes, %llu allocations\n",
              static_cast<unsigned long long>(s.reserved_bytes),
              static_cast<unsigned long long>(s.cached_bytes),
              static_cast<unsigned long long>(s.allocations));
  return 0;
}
