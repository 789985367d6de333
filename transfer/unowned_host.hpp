// The allocator behind Endpoint::unowned_host() as the Engine a copy's
// destination must be: a route may end in unowned host memory (a result
// read back from a device for a caller that registered no CPU engine), and
// the copy is then allocated from the process heap (Buffer::allocate_unowned).
// It runs nothing: prepare answers Unsupported, launches fail.
// Thread-safe; one object for the process.
#pragma once

#include "engines/engine.hpp"

namespace tenact {

Engine& unowned_host_memory();

}  // namespace tenact
