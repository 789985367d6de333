#include "core/tensor_layout.hpp"

#include <algorithm>
#include <cstring>


namespace tenact {

namespace {

template <class T>
std::string list_text(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

Result<uint64_t> checked_mul(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return Error{ErrorCode::Overflow, std::string{what} + " overflows 64 bits"};
  return r;
}

Result<uint64_t> checked_add(uint64_t a, uint64_t b, std::string_view what) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return Error{ErrorCode::Overflow, std::string{what} + " overflows 64 bits"};
  return r;
}

Result<uint64_t> product(std::span<const uint64_t> dims, std::string_view what) {
  uint64_t n = 1;
  for (uint64_t d : dims) {
    TENACT_ASSIGN_OR_RETURN(n, checked_mul(n, d, what));
  }
  return n;
}

Status within_limit(uint64_t bytes, std::string_view what) {
  if (bytes > kMaxTensorBytes)
    return Error{ErrorCode::LimitExceeded, std::string{what} + " needs " + std::to_string(bytes) +
                                               " bytes, more than the limit of " +
                                               std::to_string(kMaxTensorBytes)};
  return ok_status();
}

// Row-major position of `coords` over `extents`, both taken in `order`.
uint64_t ordered_index(std::span<const uint64_t> coords, std::span<const uint64_t> extents,
                       std::span<const uint32_t> order) {
  uint64_t index = 0;
  for (uint32_t axis : order) index = index * extents[axis] + coords[axis];
  return index;
}

}  // namespace

std::string BlockedLayout::to_string() const {
  return "block=" + list_text(block) + ", axis_order=" + list_text(axis_order);
}

ResolvedTensorLayout ResolvedTensorLayout::strided(std::vector<uint64_t> byte_strides) {
  ResolvedTensorLayout l;
  l.kind = Kind::Strided;
  l.byte_strides = std::move(byte_strides);
  return l;
}

Status check_blocked_layout(const BlockedLayout& layout, size_t rank) {
  if (layout.block.size() != rank)
    return Error{ErrorCode::InvalidPlan, "blocked layout has " + std::to_string(layout.block.size()) +
                                             " block sizes for a tensor of rank " + std::to_string(rank)};
  for (size_t a = 0; a < rank; ++a)
    if (layout.block[a] == 0)
      return Error{ErrorCode::InvalidPlan, "blocked layout has block size 0 on axis " + std::to_string(a)};
  std::vector<bool> seen(rank, false);
  if (layout.axis_order.size() != rank)
    return Error{ErrorCode::InvalidPlan, "blocked layout axis_order " + list_text(layout.axis_order) +
                                             " is not a permutation of " + std::to_string(rank) + " axes"};
  for (uint32_t a : layout.axis_order) {
    if (a >= rank || seen[a])
      return Error{ErrorCode::InvalidPlan, "blocked layout axis_order " + list_text(layout.axis_order) +
                                               " is not a permutation of " + std::to_string(rank) + " axes"};
    seen[a] = true;
  }
  return ok_status();
}

Result<std::vector<uint64_t>> blocked_padded_dims(const BlockedLayout& layout,
                                                  std::span<const uint64_t> dims) {
  TENACT_TRY(check_blocked_layout(layout, dims.size()));
  std::vector<uint64_t> padded(dims.size());
  for (size_t a = 0; a < dims.size(); ++a) {
    TENACT_ASSIGN_OR_RETURN(uint64_t up, checked_add(dims[a], layout.block[a] - 1, "blocked tensor padding"));
    padded[a] = up / layout.block[a] * layout.block[a];
  }
  return padded;
}

Result<ResolvedTensorLayout> ResolvedTensorLayout::blocked_for(const BlockedLayout& layout,
                                                               std::span<const uint64_t> dims) {
  TENACT_ASSIGN_OR_RETURN(auto padded, blocked_padded_dims(layout, dims));
  ResolvedTensorLayout l;
  l.kind = Kind::Blocked;
  l.blocked = layout;
  if (!std::equal(padded.begin(), padded.end(), dims.begin(), dims.end()))
    for (uint32_t axis : layout.axis_order) l.zero_fill_physical_dims.push_back(padded[axis]);
  return l;
}

std::string ResolvedTensorLayout::to_string() const {
  switch (kind) {
    case Kind::Contiguous: return "contiguous";
    case Kind::Strided: return "strided" + list_text(byte_strides);
    case Kind::Blocked: {
      std::string s = "blocked{" + blocked.to_string();
      if (!zero_fill_physical_dims.empty()) s += ", zero_fill=" + list_text(zero_fill_physical_dims);
      return s + "}";
    }
  }
  return "?";
}

Result<ResolvedTensorSpec> ResolvedTensorSpec::make(std::vector<uint64_t> dims, DType dtype,
                                                    ResolvedTensorLayout layout) {
  ResolvedTensorSpec spec;
  spec.dtype = dtype;
  switch (layout.kind) {
    case ResolvedTensorLayout::Kind::Contiguous: break;
    case ResolvedTensorLayout::Kind::Strided:
      if (layout.byte_strides.size() != dims.size())
        return Error{ErrorCode::InvalidPlan, "strided layout has " + std::to_string(layout.byte_strides.size()) +
                                                 " strides for a tensor of rank " + std::to_string(dims.size())};
      break;
    case ResolvedTensorLayout::Kind::Blocked: {
      TENACT_ASSIGN_OR_RETURN(layout, ResolvedTensorLayout::blocked_for(layout.blocked, dims));
      break;
    }
  }
  spec.dims = std::move(dims);
  spec.layout = std::move(layout);
  TENACT_TRY(spec.minimum_storage_bytes());
  return spec;
}

Result<uint64_t> ResolvedTensorSpec::minimum_storage_bytes() const {
  const uint64_t size = size_of(dtype);
  const std::string what = "tensor " + to_string();
  uint64_t bytes = 0;
  switch (layout.kind) {
    case ResolvedTensorLayout::Kind::Contiguous: {
      TENACT_ASSIGN_OR_RETURN(uint64_t n, product(dims, what));
      TENACT_ASSIGN_OR_RETURN(bytes, checked_mul(n, size, what));
      break;
    }
    case ResolvedTensorLayout::Kind::Strided: {
      if (std::find(dims.begin(), dims.end(), 0) != dims.end()) break;
      uint64_t last = 0;
      for (size_t a = 0; a < dims.size(); ++a) {
        TENACT_ASSIGN_OR_RETURN(uint64_t span, checked_mul(dims[a] - 1, layout.byte_strides[a], what));
        TENACT_ASSIGN_OR_RETURN(last, checked_add(last, span, what));
      }
      TENACT_ASSIGN_OR_RETURN(bytes, checked_add(last, size, what));
      break;
    }
    case ResolvedTensorLayout::Kind::Blocked: {
      TENACT_ASSIGN_OR_RETURN(auto padded, blocked_padded_dims(layout.blocked, dims));
      TENACT_ASSIGN_OR_RETURN(uint64_t n, product(padded, what));
      TENACT_ASSIGN_OR_RETURN(bytes, checked_mul(n, size, what));
      break;
    }
  }
  TENACT_TRY(within_limit(bytes, what));
  return bytes;
}

std::string ResolvedTensorSpec::to_string() const {
  return std::string{tenact::to_string(dtype)} + list_text(dims) + " " + layout.to_string();
}

uint64_t blocked_element_offset(const BlockedLayout& layout, std::span<const uint64_t> dims,
                                std::span<const uint64_t> index) {
  const size_t rank = dims.size();
  std::vector<uint64_t> grid(rank), tile(rank), within(rank);
  uint64_t tile_size = 1;
  for (size_t a = 0; a < rank; ++a) {
    const uint64_t b = layout.block[a];
    grid[a] = (dims[a] + b - 1) / b;
    tile[a] = index[a] / b;
    within[a] = index[a] % b;
    tile_size *= b;
  }
  return ordered_index(tile, grid, layout.axis_order) * tile_size +
         ordered_index(within, layout.block, layout.axis_order);
}

Result<HostTensor> pack_blocked(const HostTensor& dense, const BlockedLayout& layout) {
  if (!dense.is_host()) return Error{ErrorCode::Internal, "pack_blocked: the tensor is not in host memory"};
  std::vector<uint64_t> dims(dense.shape().begin(), dense.shape().end());
  TENACT_ASSIGN_OR_RETURN(auto padded, blocked_padded_dims(layout, dims));
  TENACT_ASSIGN_OR_RETURN(uint64_t count, product(padded, "blocked tensor"));
  TENACT_TRY(within_limit(count * size_of(dense.dtype()), "blocked tensor"));
  TENACT_ASSIGN_OR_RETURN(HostTensor out, HostTensor::zeros(dense.dtype(), {static_cast<int64_t>(count)}));
  const size_t size = size_of(dense.dtype());
  std::vector<uint64_t> index(dims.size(), 0);
  const std::byte* src = dense.data();
  std::byte* dst = out.data();
  for_each_offset(dense.shape(), dense.strides(), 0, [&](int64_t linear, int64_t offset) {
    uint64_t rest = static_cast<uint64_t>(linear);
    for (size_t a = dims.size(); a-- > 0;) {
      index[a] = rest % dims[a];
      rest /= dims[a];
    }
    std::memcpy(dst + blocked_element_offset(layout, dims, index) * size, src + offset * static_cast<int64_t>(size),
                size);
  });
  return out;
}

Result<HostTensor> unpack_blocked(const HostTensor& packed, const BlockedLayout& layout,
                                  std::span<const uint64_t> dims) {
  if (!packed.is_host()) return Error{ErrorCode::Internal, "unpack_blocked: the tensor is not in host memory"};
  TENACT_ASSIGN_OR_RETURN(auto padded, blocked_padded_dims(layout, dims));
  TENACT_ASSIGN_OR_RETURN(uint64_t count, product(padded, "blocked tensor"));
  if (static_cast<uint64_t>(packed.element_count()) < count || !packed.is_contiguous())
    return Error{ErrorCode::InputMismatch, "blocked storage of " + std::to_string(packed.element_count()) +
                                               " elements, the layout needs " + std::to_string(count)};
  std::vector<int64_t> shape(dims.begin(), dims.end());
  TENACT_ASSIGN_OR_RETURN(HostTensor out, HostTensor::zeros(packed.dtype(), shape));
  const size_t size = size_of(packed.dtype());
  std::vector<uint64_t> index(dims.size(), 0);
  const std::byte* src = packed.data();
  std::byte* dst = out.data();
  for_each_offset(out.shape(), out.strides(), 0, [&](int64_t linear, int64_t offset) {
    uint64_t rest = static_cast<uint64_t>(linear);
    for (size_t a = dims.size(); a-- > 0;) {
      index[a] = rest % dims[a];
      rest /= dims[a];
    }
    std::memcpy(dst + offset * static_cast<int64_t>(size), src + blocked_element_offset(layout, dims, index) * size,
                size);
  });
  return out;
}

}  // namespace tenact
