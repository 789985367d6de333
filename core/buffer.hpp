// Buffers: memory an allocator handed out, owned by an engine in one of its
// storage classes (its endpoint), or host memory that no engine owns.
//
// Ownership. A Buffer is shared (std::shared_ptr<Buffer>); it keeps the
// allocator it came from alive, and gives its memory back to that allocator
// exactly once, from whichever thread drops the last reference — also after
// the engine that made it is gone.
//
// Addresses. data() is the address in the buffer's own memory: a host
// pointer when host_addressable() (host and pinned memory), a device
// address otherwise (valid only for that device's kernels and copies).
// Nothing outside an engine and its transfer providers dereferences a
// buffer that is not host addressable.
//
// Host allocations. Buffer::allocate(bytes) takes host memory from the host
// buffer source installed on the calling thread (HostBufferScope), else from
// the process heap as unowned host memory. An engine that runs host kernels
// installs its own source while they run, so the results those kernels
// allocate are its buffers, counted in its memory statistics.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "core/endpoint.hpp"
#include "core/error.hpp"

namespace tenact {

inline constexpr size_t kTensorAlignment = 64;
/// Largest tensor the runtime agrees to describe or allocate (1 TiB): a
/// declared shape above it is an error, not an allocation attempt.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;

/// 32 MiB: below it glibc's dynamic mmap threshold (which grows up to
/// 32 MiB) lets repeated allocations reuse warm heap pages, cheaper than
/// faulting in fresh mapped pages per call (measured: a 1 MiB threshold
/// cost dot_general 512x512 a quarter of its time in page faults).
inline constexpr size_t kMappedBufferBytes = size_t{32} << 20;

/// Where a buffer's memory goes back to. Implementations are thread-safe:
/// release() may be called from any thread, at any time, also concurrently.
class BufferAllocator {
 public:
  virtual ~BufferAllocator() = default;
  /// Takes back `bytes` at `address` that this allocator handed out.
  /// Called exactly once per buffer. Must not throw or block on device work.
  virtual void release(std::byte* address, size_t bytes) noexcept = 0;
};

/// What a new host buffer holds. Zeroed: zeros. Unspecified: whatever its
/// memory held (zeros, or an earlier buffer's bytes of the same source), for
/// a caller that writes every byte before anything reads it (a kernel's
/// results): it skips the memset a reused or heap block would need.
enum class BufferFill : uint8_t { Zeroed, Unspecified };

class Buffer {
 public:
  /// `bytes` (0 allowed) of kTensorAlignment-aligned host memory from the
  /// calling thread's host buffer source (see the file comment),
  /// zero-filled unless `fill` says Unspecified. Errors: LimitExceeded
  /// above kMaxTensorBytes; ResourceExhausted when the memory cannot be had.
  static Result<std::shared_ptr<Buffer>> allocate(size_t bytes,
                                                  BufferFill fill = BufferFill::Zeroed);
  /// The same from the process heap, as unowned host memory, whatever
  /// source is installed.
  static Result<std::shared_ptr<Buffer>> allocate_unowned(size_t bytes,
                                                          BufferFill fill = BufferFill::Zeroed);

  /// Wraps memory `owner` handed out at `address`; `owner->release` gets
  /// it back when the last reference drops. Errors: ResourceExhausted when
  /// the descriptor cannot be allocated (the memory is then released).
  static Result<std::shared_ptr<Buffer>> adopt(std::byte* address, size_t bytes, size_t alignment,
                                               Endpoint endpoint, bool host_addressable,
                                               std::shared_ptr<BufferAllocator> owner);

  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  size_t alignment() const { return alignment_; }
  /// The engine and storage class that own it (Endpoint::unowned_host()
  /// for process-heap memory).
  const Endpoint& endpoint() const { return endpoint_; }
  bool host_addressable() const { return host_addressable_; }

 private:
  /// Only adopt() makes buffers (one block for the descriptor and its
  /// shared count, through allocate_shared, which needs a public
  /// constructor; blocks are recycled per thread, see buffer.cpp).
  struct Passkey {
    explicit Passkey() = default;
  };
  /// A small unowned host buffer held in its own descriptor (buffer.cpp).
  struct Inline;

 public:
  Buffer(Passkey, std::byte* data, size_t size, size_t alignment, Endpoint endpoint, bool host_addressable,
         std::shared_ptr<BufferAllocator> owner)
      : data_(data),
        size_(size),
        alignment_(alignment),
        endpoint_(std::move(endpoint)),
        host_addressable_(host_addressable),
        owner_(std::move(owner)) {}

 private:
  std::byte* data_;
  size_t size_;
  size_t alignment_;
  Endpoint endpoint_;
  bool host_addressable_;
  std::shared_ptr<BufferAllocator> owner_;
};

/// Host memory from the process heap: zero-filled, kTensorAlignment-aligned;
/// kMappedBufferBytes or more straight from mmap (zero pages, no memset;
/// transparent huge pages requested), so a kernel's first write faults them
/// in on its own threads instead of a single-threaded memset paying for
/// every page first. host_heap_release gives back what host_heap_allocate
/// returned for the same `bytes`. Thread-safe.
Result<std::byte*> host_heap_allocate(size_t bytes);
void host_heap_release(std::byte* address, size_t bytes) noexcept;

/// Counters of an allocator. `allocated` and its peak are in bytes as asked
/// for (not rounded); `reserved` is what the allocator holds from the
/// system: alive buffers (a caching source counts a cached-class buffer at
/// its class size, see HostCacheOptions) plus `cached`, the freed blocks it
/// keeps for reuse. Without a cache reserved == allocated and cached == 0.
struct MemoryStats {
  uint64_t allocated_bytes = 0;
  uint64_t reserved_bytes = 0;
  uint64_t peak_allocated_bytes = 0;
  uint64_t allocations = 0;
  uint64_t releases = 0;
  uint64_t cached_bytes = 0;
  friend bool operator==(const MemoryStats&, const MemoryStats&) = default;
};

/// The size-class cache of a HostBufferSource (off unless `enabled`).
///
/// Size classes: a request of `bytes` is served by a block of
/// host_cache_class_bytes(bytes): 64, 128, 192, 256, then four classes per
/// power of two (320, 384, 448, 512, 640, ...), so a block wastes less than
/// a quarter of itself (and under 64 bytes up to 256). A freed block goes
/// onto its class's free list (last in, first out: the warmest block is
/// reused first) while the cache holds at most max_cached_bytes, else back
/// to the heap; an allocation takes a block of its class from the list
/// first. A request whose class is above max_cached_block bypasses the
/// cache entirely (allocated and freed as without one).
struct HostCacheOptions {
  bool enabled = false;
  /// Most bytes (class sizes) held in free lists at once. 256 MiB: eight
  /// blocks of the largest default class, the bound on what an idle source
  /// (an engine's storage class) keeps; a working set that churns more
  /// than that is made of large blocks, whose heap cost is small next to
  /// the work that fills them.
  uint64_t max_cached_bytes = uint64_t{256} << 20;
  /// Largest class size cached. kMappedBufferBytes (32 MiB): larger blocks
  /// come from mmap as zero pages that a kernel's first writes fault in on
  /// its own threads; a cached block would instead be zeroed by one
  /// memset on the allocating thread, and a few of them would fill the cap.
  size_t max_cached_block = kMappedBufferBytes;
};

/// The class size a caching source serves `bytes` with (see
/// HostCacheOptions); a multiple of kTensorAlignment, at least 64.
/// Precondition: bytes <= kMaxTensorBytes (the result is then at most
/// kMaxTensorBytes, so nothing overflows).
uint64_t host_cache_class_bytes(uint64_t bytes);

/// Limits of a HostBufferSource: a capacity bounds the bytes allocated at
/// once (as asked for, not rounded), as a device's memory does (the
/// simulated devices keep theirs in such a source): an allocation past it
/// is refused.
struct HostSourceLimits {
  /// 0: no bound but the heap's.
  uint64_t capacity_bytes = 0;
};

/// A source of host buffers: host memory from the process heap, labelled
/// with `endpoint` and counted (MemoryStats), optionally through a
/// size-class cache (HostCacheOptions) and a capacity (HostSourceLimits). Thread-safe: allocate, release,
/// stats and trim from any thread, concurrently. Buffers keep it alive, so
/// it is destroyed only once no buffer of it is left; it then gives its
/// cached blocks back (trim).
///
/// Cost. Without a cache, allocate is host_heap_allocate plus a few relaxed
/// atomic updates (no lock). With one, allocate and release each take the
/// source's mutex once, for the counts and a few pointer moves: a cache hit
/// costs one lock and no other atomic read-modify-write (uncontended
/// ~20-40 ns; concurrent threads of one engine serialise there, never
/// across a heap call or a memset, which run outside it).
class HostBufferSource : public BufferAllocator,
                         public std::enable_shared_from_this<HostBufferSource> {
 public:
  static std::shared_ptr<HostBufferSource> create(Endpoint endpoint, HostCacheOptions cache = {},
                                                   HostSourceLimits limits = {});
  /// See Buffer::allocate for the contract and errors, and one more:
  /// LimitExceeded naming the endpoint when the capacity would be exceeded
  /// ("out of memory on sim:0/device: 96 bytes asked for, 32 of 100 in
  /// use"), which leaves the source as it was. A reused block is
  /// zero-filled over the requested bytes rounded up to kTensorAlignment
  /// (what the heap path zeroes too); the rest of its class, never part of
  /// the buffer, may hold earlier buffers' data of this source.
  Result<std::shared_ptr<Buffer>> allocate(size_t bytes, BufferFill fill = BufferFill::Zeroed);
  void release(std::byte* address, size_t bytes) noexcept override;
  MemoryStats stats() const;
  /// Gives every cached block back to the heap: reserved then counts alive
  /// buffers only. Buffers released meanwhile may be cached again.
  void trim() noexcept;
  const Endpoint& endpoint() const { return endpoint_; }
  const HostCacheOptions& cache_options() const { return cache_; }

  const HostSourceLimits& limits() const { return limits_; }

  HostBufferSource(Endpoint endpoint, HostCacheOptions cache, HostSourceLimits limits = {})
      : endpoint_(std::move(endpoint)), cache_(cache), limits_(limits) {}
  ~HostBufferSource() override;

  /// Number of size classes up to kMaxTensorBytes (free lists per source;
  /// checked against the class arithmetic in buffer.cpp).
  static constexpr size_t kClassCount = 132;

 private:
  /// Whether `bytes` goes through the cache: a pure function of `bytes`
  /// and cache_, so release() decides as allocate() did.
  bool cacheable(size_t bytes) const;
  /// What a buffer of `bytes` takes from the heap: its class size when
  /// cacheable, else `bytes` itself.
  uint64_t block_bytes(size_t bytes) const;
  /// Whether `bytes` more fit the capacity with `in_use` allocated.
  bool fits(size_t bytes, uint64_t in_use) const;
  Error over_capacity(size_t bytes, uint64_t in_use) const;
  /// allocate's address without a cache: counted (atomically), then the heap.
  Result<std::byte*> take_uncached(size_t bytes, BufferFill fill);
  /// allocate's address with a cache: counted and a free block taken under
  /// mutex_ at once, else the heap (outside it).
  Result<std::byte*> take_counted(size_t bytes, BufferFill fill);
  /// Adds `bytes` to the allocated count (and its peak); with a capacity,
  /// only when they fit (LimitExceeded otherwise, nothing counted). The
  /// _locked forms run under mutex_ (caching sources count only there).
  Status count_allocation(size_t bytes);
  Status count_allocation_locked(size_t bytes);
  void uncount_allocation_locked(size_t bytes);

  Endpoint endpoint_;
  const HostCacheOptions cache_;
  const HostSourceLimits limits_;
  /// Without a cache: updated by atomic read-modify-writes. With one:
  /// written under mutex_ only (plain loads and stores). Atomic so that
  /// stats() reads them lock-free either way.
  std::atomic<uint64_t> allocated_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<uint64_t> allocations_{0};
  std::atomic<uint64_t> releases_{0};
  /// With a cache: every block held from the system, cached ones included
  /// (without one, stats() reports allocated_). Changed by atomic
  /// read-modify-writes (heap calls and trim run outside mutex_).
  std::atomic<uint64_t> reserved_{0};
  /// Written under mutex_ only; atomic so that stats() reads it lock-free.
  std::atomic<uint64_t> cached_{0};
  /// Guards free_: per class, the head of an intrusive list of free blocks
  /// (each block's first bytes hold the next block's address).
  mutable std::mutex mutex_;
  std::array<std::byte*, kClassCount> free_{};
};

/// Installs `source` as the calling thread's host buffer source for its
/// lifetime (scopes nest; the previous one comes back). The source must
/// outlive the scope. Not movable: one scope, one thread.
class HostBufferScope {
 public:
  explicit HostBufferScope(HostBufferSource* source);
  ~HostBufferScope();
  HostBufferScope(const HostBufferScope&) = delete;
  HostBufferScope& operator=(const HostBufferScope&) = delete;

 private:
  HostBufferSource* previous_;
};

}  // namespace tenact
