# TENACT_PUBLIC_HEADERS: the headers a user of the installed package
# includes, relative to the source tree. The install adds every project
# header they include (cmake/TenactHeaders.cmake); the API reference
# documents these (cmake/TenactDocs.cmake); tests/package/scan_headers.cmake
# checks the installed result.
set(TENACT_PUBLIC_HEADERS
  actors/runtime.hpp
  actors/trace_recorder.hpp
  core/buffer.hpp
  core/builder.hpp
  core/dim_expr.hpp
  core/dtype.hpp
  core/endpoint.hpp
  core/error.hpp
  core/extension.hpp
  core/op_attrs.hpp
  core/op_kind.hpp
  core/program.hpp
  core/program_json.hpp
  core/scalar.hpp
  core/shape.hpp
  core/tensor.hpp
  core/tensor_io.hpp
  engines/cpu/cpu_engine.hpp
  engines/engine.hpp
  engines/sim/sim_engine.hpp
  engines/sim/sim_faults.hpp
  engines/sim/sim_platform.hpp
  extensions/builtin_extensions.hpp
  planning/input_signature.hpp
  planning/prepare_options.hpp
  setup/engine_setup.hpp
  transfer/providers.hpp
  transfer/transfer_route.hpp)
