// What `--engines cuda:N` opens. The CUDA engine (engines/cuda) does not run
// programs yet: today this names why a listed CUDA engine cannot be used —
// the build has no CUDA engine, the machine has no CUDA device, the ordinal
// is past the devices the CUDA runtime lists, or the engine is not there
// yet — so that every command refuses it with one clear message.
//
// Thread-safety: safe from any thread (the device query is).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/error.hpp"

namespace tenact::setup {

/// Why engine `id` ("cuda:N", ordinal N) cannot be registered. Errors, each
/// naming the engine: Unsupported "this build has no CUDA engine" (built
/// without the toolkit, or with TENACT_BUILD_CUDA off, as the sanitizer
/// builds are); Unsupported "no CUDA device (<the CUDA runtime's reason>)";
/// InvalidAttribute when N is past the devices listed (naming how many);
/// Unsupported "the CUDA engine cannot run programs yet" for a device that
/// exists (naming it).
Error cuda_engine_unavailable(std::string_view id, uint32_t ordinal);

}  // namespace tenact::setup
