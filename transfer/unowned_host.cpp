#include "transfer/unowned_host.hpp"

namespace tenact {

namespace {

class UnownedHostMemory final : public Engine {
 public:
  UnownedHostMemory() {
    identity_.id = "";
    identity_.hardware_class = "host-heap";
    capabilities_.storage_classes = {"host"};
    capabilities_.default_storage_class = "host";
    capabilities_.executable = false;
  }
  const EngineIdentity& identity() const override { return identity_; }
  const EngineCapabilities& capabilities() const override { return capabilities_; }
  PrepareAnswer prepare(const OpPrepareRequest&) override {
    return Unsupported{"unowned host memory runs no ops"};
  }
  Result<Tensor> allocate(std::string_view storage_class, DType dtype, std::vector<int64_t> shape) override {
    if (storage_class != "host")
      return Error{ErrorCode::Unsupported, "unowned memory is host memory, not '" + std::string{storage_class} + "'"};
    TENACT_ASSIGN_OR_RETURN(uint64_t bytes, checked_byte_size(dtype, shape));
    TENACT_ASSIGN_OR_RETURN(auto buffer, Buffer::allocate_unowned(static_cast<size_t>(bytes)));
    auto strides = row_major_strides(shape);
    return Tensor::view(std::move(buffer), dtype, std::move(shape), std::move(strides), 0);
  }
  void launch(std::shared_ptr<const PreparedOp>, std::vector<Tensor>, SymbolBindings, LaunchCompletion done) override {
    done(Error{ErrorCode::Unsupported, "unowned host memory runs no ops"});
  }

 private:
  EngineIdentity identity_;
  EngineCapabilities capabilities_;
};

}  // namespace

Engine& unowned_host_memory() {
  static UnownedHostMemory memory;
  return memory;
}

}  // namespace tenact
