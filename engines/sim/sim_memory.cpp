#include "engines/sim/sim_memory.hpp"

namespace tenact::sim {

namespace {

// Owns the viewed buffer for as long as the view lives; gives nothing back
// itself (the viewed buffer goes back to its own source when it drops).
class ViewKeeper final : public BufferAllocator {
 public:
  explicit ViewKeeper(std::shared_ptr<Buffer> viewed) : viewed_(std::move(viewed)) {}
  void release(std::byte*, size_t) noexcept override { viewed_.reset(); }

 private:
  std::shared_ptr<Buffer> viewed_;
};

}  // namespace

Result<Tensor> relabel(const Tensor& value, bool host_addressable) {
  const std::shared_ptr<Buffer>& buffer = value.buffer();
  if (!buffer || buffer->host_addressable() == host_addressable) return value;
  std::shared_ptr<ViewKeeper> keeper;
  try {
    keeper = std::make_shared<ViewKeeper>(buffer);
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::ResourceExhausted, "out of memory for a view of a " + buffer->endpoint().to_string() + " buffer"};
  }
  TENACT_ASSIGN_OR_RETURN(auto view, Buffer::adopt(buffer->data(), buffer->size(), buffer->alignment(),
                                                   buffer->endpoint(), host_addressable, std::move(keeper)));
  return Tensor::view(std::move(view), value.dtype(), value.shape(), value.strides(), value.offset());
}

}  // namespace tenact::sim
