// A simulated device's memory: host pages from a capacity-bounded
// HostBufferSource (allocations past the device's memory are
// LimitExceeded naming it), seen from outside as device memory.
//
// The engine's kernels (the CPU kernels) run on host-addressable views of
// its buffers; what leaves the engine (results, allocate()) is a device
// view that the host may not address (Tensor::is_host() false), so nothing
// but the engine and its links reads it, as for a real device. A view
// keeps the buffer it views alive; the memory goes back to the device when
// the last view of it is dropped.
//
// Thread-safe: every function from any thread.
#pragma once

#include <memory>

#include "core/buffer.hpp"
#include "core/tensor.hpp"

namespace tenact::sim {

/// The same elements over the same memory, with the buffer marked host
/// addressable or not (`host_addressable`), keeping `value`'s buffer alive.
/// A tensor already so marked, or without a buffer, is returned as it is.
/// Errors: ResourceExhausted when the view's descriptor cannot be had.
Result<Tensor> relabel(const Tensor& value, bool host_addressable);

/// relabel(value, true): what the engine's kernels and links read.
inline Result<Tensor> host_view(const Tensor& value) { return relabel(value, true); }
/// relabel(value, false): what the engine hands out.
inline Result<Tensor> device_view(const Tensor& value) { return relabel(value, false); }

}  // namespace tenact::sim
