// A vector that keeps its first N elements inside itself and goes to the
// heap only beyond them: for the short per-call lists of hot paths (a
// kernel's operands, a region's outputs), which then cost no allocation.
//
// Contract: T is default-constructible and movable; the N inline elements
// are default-constructed up front (cheap types only). Not copyable. One
// thread at a time, as std::vector.
#pragma once

#include <array>
#include <cstddef>
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

  /// Appends `value`; allocates only when the size passes N (then every
  /// element moves to the heap once).
  void push_back(T value) {
    if (!on_heap_ && size_ < N) {
      inline_[size_++] = std::move(value);
      return;
    }
    if (!on_heap_) {
      heap_.reserve(2 * N);
      for (size_t i = 0; i < size_; ++i) heap_.push_back(std::move(inline_[i]));
      on_heap_ = true;
    }
    heap_.push_back(std::move(value));
  }

  size_t size() const { return on_heap_ ? heap_.size() : size_; }
  bool empty() const { return size() == 0; }
  T* data() { return on_heap_ ? heap_.data() : inline_.data(); }
  const T* data() const { return on_heap_ ? heap_.data() : inline_.data(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  std::span<T> span() { return {data(), size()}; }
  std::span<const T> span() const { return {data(), size()}; }

 private:
  std::array<T, N> inline_{};
  size_t size_ = 0;
  bool on_heap_ = false;
  std::vector<T> heap_;
};

}  // namespace tenact
