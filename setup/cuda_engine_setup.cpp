#include "setup/cuda_engine_setup.hpp"

#include <string>

#if TENACT_HAVE_CUDA
#include "engines/cuda/device_query.hpp"
#endif

namespace tenact::setup {

Error cuda_engine_unavailable(std::string_view id, uint32_t ordinal) {
  const std::string engine = "engine '" + std::string{id} + "'";
#if TENACT_HAVE_CUDA
  auto devices = cuda::query_cuda_devices();
  if (!devices.ok())
    return Error{ErrorCode::Unsupported, engine + ": no CUDA device (" + devices.error().message() + ")"};
  if (devices->empty())
    return Error{ErrorCode::Unsupported, engine + ": no CUDA device (the CUDA runtime lists none)"};
  if (ordinal >= devices->size()) {
    const size_t count = devices->size();
    return Error{ErrorCode::InvalidAttribute,
                 engine + ": this machine has " + std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") +
                     " (cuda:0" + (count == 1 ? "" : " .. cuda:" + std::to_string(count - 1)) + ")"};
  }
  return Error{ErrorCode::Unsupported, engine + " (" + (*devices)[ordinal].name +
                                           "): the CUDA engine cannot run programs yet; use cpu or sim:N"};
#else
  (void)ordinal;
  return Error{ErrorCode::Unsupported, engine + ": this build has no CUDA engine (built without the CUDA "
                                                "toolkit or with TENACT_BUILD_CUDA off)"};
#endif
}

}  // namespace tenact::setup
