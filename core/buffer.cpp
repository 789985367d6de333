// Buffers, the process heap and counted host buffer sources (see
// core/buffer.hpp).
#include "core/buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace tenact {

namespace {

thread_local HostBufferSource* t_host_source = nullptr;

/// The process heap as an allocator: what unowned host buffers go back to.
class UnownedHostHeap final : public BufferAllocator {
 public:
  void release(std::byte* address, size_t bytes) noexcept override { host_heap_release(address, bytes); }
};

const std::shared_ptr<BufferAllocator>& unowned_host_heap() {
  // Never destroyed: buffers held by static objects may drop after main.
  static const auto* heap = new std::shared_ptr<BufferAllocator>(std::make_shared<UnownedHostHeap>());
  return *heap;
}

size_t rounded_heap_bytes(size_t bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment; never 0.
  return bytes == 0 ? kTensorAlignment
                    : (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

}  // namespace

Result<std::byte*> host_heap_allocate(size_t bytes) {
  if (bytes > kMaxTensorBytes)
    return Error{ErrorCode::LimitExceeded, "buffer of " + std::to_string(bytes) +
                                               " bytes is over the 1 TiB tensor limit"};
  if (bytes >= kMappedBufferBytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return Error{ErrorCode::ResourceExhausted,
                   "allocation of " + std::to_string(bytes) + " bytes failed (mmap)"};
    // Advice only: fewer page faults where transparent huge pages are
    // enabled for madvised regions; harmless where they are not.
    (void)::madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<std::byte*>(p);
  }
  const size_t rounded = rounded_heap_bytes(bytes);
  void* p = std::aligned_alloc(kTensorAlignment, rounded);
  if (p == nullptr)
    return Error{ErrorCode::ResourceExhausted,
                 "allocation of " + std::to_string(bytes) + " bytes failed"};
  std::memset(p, 0, rounded);
  return static_cast<std::byte*>(p);
}

void host_heap_release(std::byte* address, size_t bytes) noexcept {
  if (bytes >= kMappedBufferBytes) ::munmap(address, bytes);
  else std::free(address);
}

// -- Buffer -------------------------------------------------------------------

Result<std::shared_ptr<Buffer>> Buffer::adopt(std::byte* address, size_t bytes, size_t alignment,
                                              Endpoint endpoint, bool host_addressable,
                                              std::shared_ptr<BufferAllocator> owner) {
  Buffer* raw = nullptr;
  try {
    // The allocation is sequenced before the arguments are evaluated: when
    // it throws, `owner` has not been moved from.
    raw = new Buffer(address, bytes, alignment, std::move(endpoint), host_addressable, std::move(owner));
    return std::shared_ptr<Buffer>(raw);
  } catch (const std::bad_alloc&) {
    // Either the descriptor or the shared_ptr's control block: the buffer
    // (when made) is deleted by shared_ptr's constructor, releasing once.
    if (raw == nullptr && owner) owner->release(address, bytes);
    return Error{ErrorCode::ResourceExhausted, "allocation of a buffer descriptor failed"};
  }
}

Result<std::shared_ptr<Buffer>> Buffer::allocate_unowned(size_t bytes) {
  TENACT_ASSIGN_OR_RETURN(std::byte * address, host_heap_allocate(bytes));
  return adopt(address, bytes, kTensorAlignment, Endpoint::unowned_host(), true, unowned_host_heap());
}

Result<std::shared_ptr<Buffer>> Buffer::allocate(size_t bytes) {
  if (t_host_source != nullptr) return t_host_source->allocate(bytes);
  return allocate_unowned(bytes);
}

Buffer::~Buffer() { owner_->release(data_, size_); }

// -- HostBufferSource -----------------------------------------------------------

std::shared_ptr<HostBufferSource> HostBufferSource::create(Endpoint endpoint) {
  return std::make_shared<HostBufferSource>(std::move(endpoint));
}

Result<std::shared_ptr<Buffer>> HostBufferSource::allocate(size_t bytes) {
  TENACT_ASSIGN_OR_RETURN(std::byte * address, host_heap_allocate(bytes));
  // Counted before adopt: a failed adopt releases through release(), which
  // takes the bytes off again.
  const uint64_t now = allocated_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  allocations_.fetch_add(1, std::memory_order_relaxed);
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return Buffer::adopt(address, bytes, kTensorAlignment, endpoint_, true, shared_from_this());
}

void HostBufferSource::release(std::byte* address, size_t bytes) noexcept {
  host_heap_release(address, bytes);
  allocated_.fetch_sub(bytes, std::memory_order_relaxed);
  releases_.fetch_add(1, std::memory_order_relaxed);
}

MemoryStats HostBufferSource::stats() const {
  MemoryStats s;
  s.allocated_bytes = allocated_.load(std::memory_order_relaxed);
  s.reserved_bytes = s.allocated_bytes;
  s.peak_allocated_bytes = peak_.load(std::memory_order_relaxed);
  s.allocations = allocations_.load(std::memory_order_relaxed);
  s.releases = releases_.load(std::memory_order_relaxed);
  return s;
}

HostBufferScope::HostBufferScope(HostBufferSource* source) : previous_(t_host_source) {
  t_host_source = source;
}

HostBufferScope::~HostBufferScope() { t_host_source = previous_; }

}  // namespace tenact
