// SharedList<T>: a list whose copies share one allocation until one of
// them is edited (copy on write).
//
// For a value that many holders copy and few change, such as the per-input
// specialization one preparation hands to every op it prepares: a copy
// costs a reference count instead of a list (holding it per op costs O(1),
// not O(inputs)). Reading never copies; only edit() does, when the list is
// shared. Thread-safety: as a std::vector, one writer or many readers per
// SharedList object; copies are independent objects (a list shared between
// copies is never written).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

namespace tenact {

template <class T>
class SharedList {
 public:
  using value_type = T;
  using const_iterator = typename std::vector<T>::const_iterator;
  using iterator = const_iterator;

  SharedList() = default;
  SharedList(std::vector<T> items)  // NOLINT(google-explicit-constructor): a list is its items
      : items_(items.empty() ? nullptr : std::make_shared<std::vector<T>>(std::move(items))) {}
  SharedList(std::initializer_list<T> items) : SharedList(std::vector<T>(items)) {}

  size_t size() const noexcept { return items_ ? items_->size() : 0; }
  bool empty() const noexcept { return size() == 0; }
  const T& operator[](size_t i) const { return (*items_)[i]; }
  const T& front() const { return items_->front(); }
  const T& back() const { return items_->back(); }
  const T* data() const noexcept { return items_ ? items_->data() : nullptr; }
  const_iterator begin() const noexcept { return items().begin(); }
  const_iterator end() const noexcept { return items().end(); }

  /// The items (an empty list has no allocation).
  const std::vector<T>& items() const noexcept { return items_ ? *items_ : empty_items(); }
  /// The list for writing: this copy's own (copied first when shared with
  /// another copy). A reference into it is this copy's until the next
  /// copy of this SharedList is made; write through it before copying.
  std::vector<T>& edit() {
    if (!items_) items_ = std::make_shared<std::vector<T>>();
    else if (items_.use_count() > 1) items_ = std::make_shared<std::vector<T>>(*items_);
    return *items_;
  }

  /// Whether both are the same allocation (two empty lists are): what
  /// accounting counts once.
  bool shares_storage_with(const SharedList& other) const noexcept { return items_ == other.items_; }

  friend bool operator==(const SharedList& a, const SharedList& b) {
    return a.items_ == b.items_ || a.items() == b.items();
  }
  friend bool operator==(const SharedList& a, const std::vector<T>& b) { return a.items() == b; }

 private:
  static const std::vector<T>& empty_items() noexcept {
    static const std::vector<T> none;
    return none;
  }
  std::shared_ptr<std::vector<T>> items_;
};

}  // namespace tenact
