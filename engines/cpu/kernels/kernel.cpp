#include "engines/cpu/kernels/kernel.hpp"

#include <cstring>
#include <string>

#include "util/worker_pool.hpp"

namespace tenact::cpu {

namespace {

/// The kernels' pool as an extension kernel's HostParallel.
class PoolParallel final : public HostParallel {
 public:
  explicit PoolParallel(WorkerPool* pool) : pool_(pool) {}
  void for_range(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) override {
    parallel_for(pool_, n, grain, body);
  }

 private:
  WorkerPool* pool_;
};

Result<std::vector<HostTensor>> run_extension(const KernelCall& call) {
  const auto* attrs = std::get_if<ExtensionAttrs>(&call.attrs);
  const std::string family = attrs ? attrs->family : std::string{"?"};
  if (call.extension == nullptr || !*call.extension)
    return Error{ErrorCode::Unsupported, "no host kernel was prepared for extension family '" + family + "'"};
  PoolParallel parallel{call.pool};
  auto results = (*call.extension)(HostKernelArgs{call.inputs, call.result_types, call.symbols, &parallel});
  if (!results.ok()) return results.error().with_context("extension family '" + family + "'");
  if (results->size() != call.result_types.size())
    return Error{ErrorCode::ProviderContract, "extension family '" + family + "' returned " +
                                                  std::to_string(results->size()) + " results for " +
                                                  std::to_string(call.result_types.size())};
  for (size_t i = 0; i < results->size(); ++i)
    if ((*results)[i].dtype() != call.result_types[i].dtype || !(*results)[i].is_host())
      return Error{ErrorCode::ProviderContract, "extension family '" + family + "' returned result " +
                                                    std::to_string(i) + " as " +
                                                    std::string{to_string((*results)[i].dtype())} +
                                                    " where " + std::string{to_string(call.result_types[i].dtype)} +
                                                    " host memory was inferred"};
  return results;
}

}  // namespace

std::optional<HostTensor> destination_view(const HostTensor& destination, DType dtype,
                                           std::span<const int64_t> shape) {
  const std::shared_ptr<Buffer>& buffer = destination.buffer();
  if (!buffer || !buffer->host_addressable() || !destination.is_contiguous()) return std::nullopt;
  auto bytes = checked_byte_size(dtype, shape);
  const auto room = static_cast<uint64_t>(destination.element_count()) * size_of(destination.dtype());
  const int64_t start = destination.offset() * static_cast<int64_t>(size_of(destination.dtype()));
  const auto size = static_cast<int64_t>(size_of(dtype));
  if (!bytes.ok() || *bytes > room || start % size != 0) return std::nullopt;
  std::vector<int64_t> dims(shape.begin(), shape.end());
  std::vector<int64_t> strides = row_major_strides(dims);
  auto view = Tensor::view(buffer, dtype, std::move(dims), std::move(strides), start / size);
  if (!view.ok()) return std::nullopt;
  return std::move(*view);
}

Result<HostTensor> output_in(const HostTensor* destination, DType dtype, std::span<const int64_t> shape,
                             BufferFill fill) {
  if (destination != nullptr) {
    if (std::optional<HostTensor> view = destination_view(*destination, dtype, shape)) {
      if (fill == BufferFill::Zeroed && view->element_count() > 0)
        std::memset(view->data(), 0, static_cast<size_t>(view->element_count()) * size_of(dtype));
      return std::move(*view);
    }
  }
  return HostTensor::dense(dtype, shape, fill);
}

Result<HostTensor> output_tensor(const KernelCall& call, size_t index, DType dtype, std::span<const int64_t> shape,
                                 BufferFill fill) {
  const HostTensor* destination = index < call.destinations.size() ? &call.destinations[index] : nullptr;
  auto made = output_in(destination, dtype, shape, fill);
  if (!made.ok()) return made.error().with_context(std::string{to_string(call.kind)});
  return made;
}

std::vector<HostTensor> single_result(const KernelCall& call, HostTensor out) {
  std::vector<HostTensor> results;
  if (call.keep != nullptr) results = std::move(call.keep->results);
  results.clear();
  results.push_back(std::move(out));
  return results;
}

Result<std::vector<HostTensor>> run_kernel(const KernelCall& call) {
  switch (family_of(call.kind)) {
    case OpFamily::Elementwise: return run_elementwise(call);
    case OpFamily::Layout: return run_layout(call);
    case OpFamily::Reduction: return run_reduction(call);
    case OpFamily::Indexing: return run_indexing(call);
    case OpFamily::Dot: return run_dot_general(call);
    case OpFamily::Extension: return run_extension(call);
  }
  return Error{ErrorCode::Unsupported,
               "the CPU kernels do not implement op '" + std::string{to_string(call.kind)} + "'"};
}

}  // namespace tenact::cpu
