// Buffers, the process heap and counted host buffer sources (see
// core/buffer.hpp).
#include "core/buffer.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
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

/// A shared_ptr to an allocator that is never destroyed, without a
/// control block (the aliasing constructor over an empty one): copying and
/// dropping it touch no reference count, so buffers made on many threads
/// at once do not contend on one counter.
const std::shared_ptr<BufferAllocator>& immortal(BufferAllocator* allocator) {
  return *new std::shared_ptr<BufferAllocator>(std::shared_ptr<BufferAllocator>{}, allocator);
}

const std::shared_ptr<BufferAllocator>& unowned_host_heap() {
  // Never destroyed: buffers held by static objects may drop after main.
  static const std::shared_ptr<BufferAllocator>& heap = immortal(new UnownedHostHeap);
  return heap;
}

/// Heap blocks (below kMappedBufferBytes) come from malloc, over-allocated
/// by kTensorAlignment and aligned by hand, the malloc'd address kept in
/// the 8 bytes below the aligned one: glibc serves malloc from its
/// per-thread cache or its bins in a few ns, where aligned_alloc takes a
/// general path that splits and frees chunk ends (measured: a one-element
/// kernel result spent most of its ~200 ns in aligned_alloc/free, and a
/// 4 KB one consolidated the heap's fast bins).
void* heap_block_allocate(size_t rounded) {
  void* raw = std::malloc(rounded + kTensorAlignment);
  if (raw == nullptr) return nullptr;
  // malloc aligns to at least 16, so the aligned address is 16..64 bytes
  // past `raw`: room for the pointer below it.
  const auto address = (reinterpret_cast<uintptr_t>(raw) + kTensorAlignment) & ~uintptr_t{kTensorAlignment - 1};
  std::memcpy(reinterpret_cast<void*>(address - sizeof(void*)), &raw, sizeof(void*));
  return reinterpret_cast<void*>(address);
}

void heap_block_release(std::byte* address) {
  void* raw = nullptr;
  std::memcpy(&raw, address - sizeof(void*), sizeof(void*));
  std::free(raw);
}

size_t rounded_heap_bytes(size_t bytes) {
  // Whole alignment units (what a zero-filled block zeroes); never 0.
  return bytes == 0 ? kTensorAlignment
                    : (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

}  // namespace

namespace {

/// host_heap_allocate, zeroing only the first `zero_bytes` of a heap block
/// (mapped blocks are zero pages whatever `zero_bytes` is).
Result<std::byte*> heap_allocate(size_t bytes, size_t zero_bytes) {
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
  void* p = heap_block_allocate(rounded);
  if (p == nullptr)
    return Error{ErrorCode::ResourceExhausted,
                 "allocation of " + std::to_string(bytes) + " bytes failed"};
  std::memset(p, 0, std::min(zero_bytes, rounded));
  return static_cast<std::byte*>(p);
}

/// The bytes heap_allocate zeroes for a buffer of `bytes` filled as `fill`.
size_t zeroed_bytes(size_t bytes, BufferFill fill) {
  return fill == BufferFill::Zeroed ? rounded_heap_bytes(bytes) : 0;
}

}  // namespace

Result<std::byte*> host_heap_allocate(size_t bytes) { return heap_allocate(bytes, rounded_heap_bytes(bytes)); }

void host_heap_release(std::byte* address, size_t bytes) noexcept {
  if (bytes >= kMappedBufferBytes) ::munmap(address, bytes);
  else heap_block_release(address);
}

// -- Buffer -------------------------------------------------------------------

namespace {

#if defined(__SANITIZE_ADDRESS__)
#define TENACT_RECYCLES_DESCRIPTORS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TENACT_RECYCLES_DESCRIPTORS 0
#endif
#endif
#ifndef TENACT_RECYCLES_DESCRIPTORS
#define TENACT_RECYCLES_DESCRIPTORS 1
#endif

/// The allocator of buffer descriptors (a Buffer with its shared count,
/// made by allocate_shared: one type, one size). A descriptor freed on a
/// thread is kept in that thread's short list and handed to the thread's
/// next buffer, so a program run again and again on one thread makes its
/// result buffers without a heap allocation. Per thread, at most
/// kKeptDescriptors blocks are kept; the rest, and everything freed while
/// the thread exits, go back to the heap. Not under AddressSanitizer (a
/// recycled block would hide a use after free).
template <class T>
struct DescriptorAllocator {
  using value_type = T;
  static constexpr size_t kKeptDescriptors = 32;

  /// Trivially destructible, so it stays usable while the thread's other
  /// thread_locals are destroyed (the reaper closes it first).
  struct Kept {
    void* blocks[kKeptDescriptors];
    size_t count;
    bool closed;
  };
  /// Frees what its thread keeps when the thread exits.
  struct Reaper {
    ~Reaper() {
      for (size_t i = 0; i < kept.count; ++i) ::operator delete(kept.blocks[i]);
      kept.count = 0;
      kept.closed = true;
    }
  };
  static thread_local constinit inline Kept kept{};
  static thread_local inline Reaper reaper;

  DescriptorAllocator() = default;
  template <class U>
  DescriptorAllocator(const DescriptorAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (TENACT_RECYCLES_DESCRIPTORS && n == 1 && kept.count > 0) return static_cast<T*>(kept.blocks[--kept.count]);
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (TENACT_RECYCLES_DESCRIPTORS && n == 1 && !kept.closed && kept.count < kKeptDescriptors) {
      (void)&reaper;  // made (and its destructor registered) on the thread's first keep
      kept.blocks[kept.count++] = p;
      return;
    }
    ::operator delete(p);
  }
  friend bool operator==(const DescriptorAllocator&, const DescriptorAllocator&) { return true; }
};

}  // namespace

Result<std::shared_ptr<Buffer>> Buffer::adopt(std::byte* address, size_t bytes, size_t alignment,
                                              Endpoint endpoint, bool host_addressable,
                                              std::shared_ptr<BufferAllocator> owner) {
  try {
    // allocate_shared forwards `owner` by reference: when its allocation
    // throws, no Buffer was constructed and `owner` still holds the
    // allocator.
    return std::allocate_shared<Buffer>(DescriptorAllocator<Buffer>{}, Passkey{}, address, bytes, alignment,
                                        std::move(endpoint), host_addressable, std::move(owner));
  } catch (const std::bad_alloc&) {
    if (owner) owner->release(address, bytes);
    return Error{ErrorCode::ResourceExhausted, "allocation of a buffer descriptor failed"};
  }
}

namespace {

/// Releases nothing: the memory of an inline buffer goes with its descriptor.
class NoRelease final : public BufferAllocator {
 public:
  void release(std::byte*, size_t) noexcept override {}
};

const std::shared_ptr<BufferAllocator>& no_release() {
  static const std::shared_ptr<BufferAllocator>& none = immortal(new NoRelease);
  return none;
}

}  // namespace

/// Unowned host memory of up to kBytes inside the descriptor's own block:
/// one heap allocation (and one free) instead of two for the scalars and
/// tiny results kernels make from threads without a host source.
struct Buffer::Inline final : Buffer {
  static constexpr size_t kBytes = 64;
  Inline(size_t bytes, BufferFill fill)
      : Buffer(Passkey{}, nullptr, bytes, kTensorAlignment, Endpoint::unowned_host(), true, no_release()) {
    const auto start = (reinterpret_cast<uintptr_t>(storage_) + kTensorAlignment - 1) & ~uintptr_t{kTensorAlignment - 1};
    data_ = reinterpret_cast<std::byte*>(start);
    if (fill == BufferFill::Zeroed) std::memset(data_, 0, kBytes);
  }
  std::byte storage_[kBytes + kTensorAlignment - 1];
};

Result<std::shared_ptr<Buffer>> Buffer::allocate_unowned(size_t bytes, BufferFill fill) {
  if (bytes <= Inline::kBytes) {
    try {
      return std::shared_ptr<Buffer>(std::make_shared<Inline>(bytes, fill));
    } catch (const std::bad_alloc&) {
      return Error{ErrorCode::ResourceExhausted, "allocation of a " + std::to_string(bytes) + "-byte buffer failed"};
    }
  }
  TENACT_ASSIGN_OR_RETURN(std::byte * address,
                          heap_allocate(bytes, zeroed_bytes(bytes, fill)));
  return adopt(address, bytes, kTensorAlignment, Endpoint::unowned_host(), true, unowned_host_heap());
}

Result<std::shared_ptr<Buffer>> Buffer::allocate(size_t bytes, BufferFill fill) {
  if (t_host_source != nullptr) return t_host_source->allocate(bytes, fill);
  return allocate_unowned(bytes, fill);
}

Buffer::~Buffer() { owner_->release(data_, size_); }

// -- HostBufferSource -----------------------------------------------------------

namespace {

/// host_cache_class_bytes.
constexpr uint64_t class_of(uint64_t bytes) {
  if (bytes <= 256) return bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  // 2^e < bytes <= 2^(e+1), e >= 8: classes 2^e + k * 2^(e-2), k = 1..4.
  const int e = std::bit_width(bytes - 1) - 1;
  const uint64_t base = uint64_t{1} << e, step = base >> 2;
  return base + (bytes - base + step - 1) / step * step;
}

/// The free list of class_of(bytes): 0..3 for 64..256, then four per power
/// of two; kClassCount - 1 for kMaxTensorBytes.
constexpr size_t class_index(uint64_t bytes) {
  if (bytes <= 256) return bytes == 0 ? 0 : static_cast<size_t>((bytes - 1) / 64);
  const int e = std::bit_width(bytes - 1) - 1;
  const uint64_t base = uint64_t{1} << e, step = base >> 2;
  const uint64_t k = (bytes - base + step - 1) / step;  // 1..4
  return static_cast<size_t>(4 + (e - 8) * 4 + (k - 1));
}

/// The class size of free list `index` (the inverse of class_index).
constexpr uint64_t class_bytes_at(size_t index) {
  if (index < 4) return (index + 1) * 64;
  const size_t e = 8 + (index - 4) / 4, k = (index - 4) % 4 + 1;
  return (uint64_t{1} << e) + k * (uint64_t{1} << (e - 2));
}
static_assert(class_index(kMaxTensorBytes) + 1 == HostBufferSource::kClassCount);
static_assert(class_of(kMaxTensorBytes) == kMaxTensorBytes);
static_assert(class_of(257) == 320 && class_of(513) == 640 && class_of(5000) == 5120);
static_assert(class_bytes_at(class_index(300)) == 320 && class_bytes_at(class_index(3u << 20)) == 3u << 20);
static_assert(class_bytes_at(class_index((3u << 20) + 1)) == class_of((3u << 20) + 1));
static_assert(sizeof(std::byte*) <= 64, "a free block holds the next one's address");

std::byte* next_free(std::byte* block) {
  std::byte* next;
  std::memcpy(&next, block, sizeof next);
  return next;
}
void set_next_free(std::byte* block, std::byte* next) { std::memcpy(block, &next, sizeof next); }

}  // namespace

uint64_t host_cache_class_bytes(uint64_t bytes) { return class_of(bytes); }

std::shared_ptr<HostBufferSource> HostBufferSource::create(Endpoint endpoint, HostCacheOptions cache,
                                                           HostSourceLimits limits) {
  return std::make_shared<HostBufferSource>(std::move(endpoint), cache, limits);
}

HostBufferSource::~HostBufferSource() { trim(); }

bool HostBufferSource::cacheable(size_t bytes) const {
  // The limit first: class_of holds only up to it (the heap path then
  // reports the error).
  return cache_.enabled && bytes <= kMaxTensorBytes && class_of(bytes) <= cache_.max_cached_block;
}

uint64_t HostBufferSource::block_bytes(size_t bytes) const { return cacheable(bytes) ? class_of(bytes) : bytes; }

Error HostBufferSource::over_capacity(size_t bytes, uint64_t in_use) const {
  return Error{ErrorCode::LimitExceeded, "out of memory on " + endpoint_.to_string() + ": " + std::to_string(bytes) +
                                             " bytes asked for, " + std::to_string(in_use) + " of " +
                                             std::to_string(limits_.capacity_bytes) + " in use"};
}

bool HostBufferSource::fits(size_t bytes, uint64_t in_use) const {
  return limits_.capacity_bytes == 0 || (bytes <= limits_.capacity_bytes && in_use <= limits_.capacity_bytes - bytes);
}

Status HostBufferSource::count_allocation(size_t bytes) {
  uint64_t in_use = allocated_.load(std::memory_order_relaxed);
  uint64_t now = 0;
  do {
    if (!fits(bytes, in_use)) return over_capacity(bytes, in_use);
    now = in_use + bytes;
  } while (!allocated_.compare_exchange_weak(in_use, now, std::memory_order_relaxed));
  allocations_.fetch_add(1, std::memory_order_relaxed);
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return ok_status();
}

Status HostBufferSource::count_allocation_locked(size_t bytes) {
  const uint64_t in_use = allocated_.load(std::memory_order_relaxed);
  if (!fits(bytes, in_use)) return over_capacity(bytes, in_use);
  const uint64_t now = in_use + bytes;
  allocated_.store(now, std::memory_order_relaxed);
  allocations_.store(allocations_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (now > peak_.load(std::memory_order_relaxed)) peak_.store(now, std::memory_order_relaxed);
  return ok_status();
}

void HostBufferSource::uncount_allocation_locked(size_t bytes) {
  allocated_.store(allocated_.load(std::memory_order_relaxed) - bytes, std::memory_order_relaxed);
  allocations_.store(allocations_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
}

Result<std::byte*> HostBufferSource::take_uncached(size_t bytes, BufferFill fill) {
  TENACT_TRY(count_allocation(bytes));
  Result<std::byte*> address = heap_allocate(bytes, zeroed_bytes(bytes, fill));
  if (!address.ok()) {
    allocated_.fetch_sub(bytes, std::memory_order_relaxed);
    allocations_.fetch_sub(1, std::memory_order_relaxed);
  }
  return address;
}

Result<std::byte*> HostBufferSource::take_counted(size_t bytes, BufferFill fill) {
  const bool in_class = cacheable(bytes);
  const uint64_t size = block_bytes(bytes);
  const size_t zero = zeroed_bytes(bytes, fill);
  std::byte* block = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    TENACT_TRY(count_allocation_locked(bytes));
    if (in_class) {
      std::byte*& head = free_[class_index(bytes)];
      if (head != nullptr) {
        block = head;
        head = next_free(block);
        cached_.store(cached_.load(std::memory_order_relaxed) - size, std::memory_order_relaxed);
      }
    }
  }
  if (block != nullptr) {
    // A warm block: zero what the buffer covers (its size rounded up to
    // kTensorAlignment, as the heap path does; nothing for Unspecified),
    // outside the lock.
    if (zero > 0) std::memset(block, 0, zero);
    return block;
  }
  Result<std::byte*> address = heap_allocate(size, zero);
  if (!address.ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    uncount_allocation_locked(bytes);
    return address.error();
  }
  reserved_.fetch_add(size, std::memory_order_relaxed);
  return address;
}

Result<std::shared_ptr<Buffer>> HostBufferSource::allocate(size_t bytes, BufferFill fill) {
  // Counted first, so that a capacity refuses before any memory is taken;
  // a failed adopt releases through release(), which takes the bytes off.
  TENACT_ASSIGN_OR_RETURN(std::byte * address, cache_.enabled ? take_counted(bytes, fill) : take_uncached(bytes, fill));
  return Buffer::adopt(address, bytes, kTensorAlignment, endpoint_, true, shared_from_this());
}

void HostBufferSource::release(std::byte* address, size_t bytes) noexcept {
  if (!cache_.enabled) {
    allocated_.fetch_sub(bytes, std::memory_order_relaxed);
    releases_.fetch_add(1, std::memory_order_relaxed);
    host_heap_release(address, bytes);
    return;
  }
  const bool in_class = cacheable(bytes);
  const uint64_t size = block_bytes(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    allocated_.store(allocated_.load(std::memory_order_relaxed) - bytes, std::memory_order_relaxed);
    releases_.store(releases_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    // cached_ <= max_cached_bytes always, so the subtraction cannot wrap.
    const uint64_t cached = cached_.load(std::memory_order_relaxed);
    if (in_class && size <= cache_.max_cached_bytes - cached) {
      std::byte*& head = free_[class_index(bytes)];
      set_next_free(address, head);
      head = address;
      cached_.store(cached + size, std::memory_order_relaxed);
      return;
    }
  }
  host_heap_release(address, size);
  reserved_.fetch_sub(size, std::memory_order_relaxed);
}

void HostBufferSource::trim() noexcept {
  std::array<std::byte*, kClassCount> lists{};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lists.swap(free_);
    cached_.store(0, std::memory_order_relaxed);
  }
  // Freed outside the lock: allocations and releases go on meanwhile.
  for (size_t i = 0; i < kClassCount; ++i) {
    const uint64_t class_bytes = class_bytes_at(i);
    for (std::byte* block = lists[i]; block != nullptr;) {
      std::byte* next = next_free(block);
      host_heap_release(block, class_bytes);
      reserved_.fetch_sub(class_bytes, std::memory_order_relaxed);
      block = next;
    }
  }
}

MemoryStats HostBufferSource::stats() const {
  MemoryStats s;
  s.allocated_bytes = allocated_.load(std::memory_order_relaxed);
  s.reserved_bytes = cache_.enabled ? reserved_.load(std::memory_order_relaxed) : s.allocated_bytes;
  s.peak_allocated_bytes = peak_.load(std::memory_order_relaxed);
  s.allocations = allocations_.load(std::memory_order_relaxed);
  s.releases = releases_.load(std::memory_order_relaxed);
  s.cached_bytes = cached_.load(std::memory_order_relaxed);
  return s;
}

HostBufferScope::HostBufferScope(HostBufferSource* source) : previous_(t_host_source) {
  t_host_source = source;
}

HostBufferScope::~HostBufferScope() { t_host_source = previous_; }

}  // namespace tenact
