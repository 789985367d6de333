#include "engines/cpu/kernels/kernel.hpp"

#include <string>

namespace tenact::cpu {

Result<std::vector<HostTensor>> run_kernel(const KernelCall& call) {
  switch (family_of(call.kind)) {
    case OpFamily::Elementwise: return run_elementwise(call);
    case OpFamily::Layout: return run_layout(call);
    case OpFamily::Reduction: return run_reduction(call);
    case OpFamily::Indexing: return run_indexing(call);
    case OpFamily::Dot: return run_dot_general(call);
    case OpFamily::Extension: break;
  }
  return Error{ErrorCode::Unsupported,
               "the CPU kernels do not implement op '" + std::string{to_string(call.kind)} + "'"};
}

}  // namespace tenact::cpu
