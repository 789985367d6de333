// A vector that keeps its first N elements inside itself and goes to the
// heap only beyond them: for the short per-call lists of hot paths (a
// kernel's operands, a region's outputs), which then cost no allocation.
//
// Contract: T is movable (elements are constructed on push_back, not
// before). Not copyable. One thread at a time, as std::vector. Cost: no
// allocation up to N elements; past N, every element moves to the heap
// once.
#pragma once

#include <cstddef>
#include <new>
#include <span>
#include <utility>
#include <vector>

namespace tenact {

template <class T, size_t N>
class SmallVector {
 public:
  SmallVector() = default;
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;
  ~SmallVector() {
    for (size_t i = 0; i < size_; ++i) inline_at(i)->~T();
  }

  void push_back(T value) {
    if (!on_heap_ && size_ < N) {
      ::new (static_cast<void*>(inline_at(size_))) T(std::move(value));
      ++size_;
      return;
    }
    if (!on_heap_) {
      heap_.reserve(2 * N);
      for (size_t i = 0; i < size_; ++i) heap_.push_back(std::move(*inline_at(i)));
      for (size_t i = 0; i < size_; ++i) inline_at(i)->~T();
      size_ = 0;
      on_heap_ = true;
    }
    heap_.push_back(std::move(value));
  }

  size_t size() const { return on_heap_ ? heap_.size() : size_; }
  bool empty() const { return size() == 0; }
  T* data() { return on_heap_ ? heap_.data() : inline_at(0); }
  const T* data() const { return on_heap_ ? heap_.data() : inline_at(0); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  std::span<T> span() { return {data(), size()}; }
  std::span<const T> span() const { return {data(), size()}; }

 private:
  T* inline_at(size_t i) { return reinterpret_cast<T*>(storage_) + i; }
  const T* inline_at(size_t i) const { return reinterpret_cast<const T*>(storage_) + i; }

  alignas(T) std::byte storage_[N * sizeof(T)];
  size_t size_ = 0;  // elements in storage_ (0 once on the heap)
  bool on_heap_ = false;
  std::vector<T> heap_;
};

}  // namespace tenact
