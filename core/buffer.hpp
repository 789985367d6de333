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

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

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

class Buffer {
 public:
  /// `bytes` (0 allowed) of zero-filled, kTensorAlignment-aligned host
  /// memory from the calling thread's host buffer source (see the file
  /// comment). Errors: LimitExceeded above kMaxTensorBytes;
  /// ResourceExhausted when the memory cannot be had.
  static Result<std::shared_ptr<Buffer>> allocate(size_t bytes);
  /// The same from the process heap, as unowned host memory, whatever
  /// source is installed.
  static Result<std::shared_ptr<Buffer>> allocate_unowned(size_t bytes);

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
  Buffer(std::byte* data, size_t size, size_t alignment, Endpoint endpoint, bool host_addressable,
         std::shared_ptr<BufferAllocator> owner)
      : data_(data),
        size_(size),
        alignment_(alignment),
        endpoint_(std::move(endpoint)),
        host_addressable_(host_addressable),
        owner_(std::move(owner)) {}
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

/// Counters of an allocator, in bytes as asked for (not rounded).
/// `reserved` is what the allocator holds from the system, cached memory
/// included (equal to `allocated` for an allocator without a cache).
struct MemoryStats {
  uint64_t allocated_bytes = 0;
  uint64_t reserved_bytes = 0;
  uint64_t peak_allocated_bytes = 0;
  uint64_t allocations = 0;
  uint64_t releases = 0;
  friend bool operator==(const MemoryStats&, const MemoryStats&) = default;
};

/// A source of host buffers: host memory from the process heap, labelled
/// with `endpoint` and counted (allocated, peak, allocations, releases).
/// No cache: reserved == allocated. Thread-safe; buffers keep it alive.
class HostBufferSource : public BufferAllocator,
                         public std::enable_shared_from_this<HostBufferSource> {
 public:
  static std::shared_ptr<HostBufferSource> create(Endpoint endpoint);
  /// See Buffer::allocate for the contract and errors.
  Result<std::shared_ptr<Buffer>> allocate(size_t bytes);
  void release(std::byte* address, size_t bytes) noexcept override;
  MemoryStats stats() const;
  const Endpoint& endpoint() const { return endpoint_; }

  explicit HostBufferSource(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}

 private:
  Endpoint endpoint_;
  std::atomic<uint64_t> allocated_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<uint64_t> allocations_{0};
  std::atomic<uint64_t> releases_{0};
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
