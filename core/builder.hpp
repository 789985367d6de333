// The C++ door into a semantic program: builds the same ProgramDraft a JSON
// document describes and validates it the same way (validate()).
//
//   ProgramBuilder b{"mlp"};
//   auto x  = b.input("x", DType::F32, {"B", 784});
//   auto w1 = b.input("w1", DType::F32, {784, 128});
//   auto h  = b.dot_general(x, w1, {.lhs_contracting_dimensions = {1},
//                                   .rhs_contracting_dimensions = {0}}, "h");
//   b.output(h);
//   Result<SemanticProgram> p = b.build();
//
// Contract: not thread-safe (one builder per thread); every method records
// what it is given and never fails — errors (a bad dimension expression,
// an undefined name, a type mismatch) surface from build(), exactly as the
// JSON loader would report them: naming the input ("input #0 'x' shape
// element 1"), the weight or state ("weight #0 'w' shape element 1") or the op ("op #2 (reshape -> 'r') attribute 'shape' element
// 0"). Unnamed results get names "%0", "%1", ...
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/program.hpp"

namespace tenact {

/// A dimension as a builder argument: an integer or an expression text.
class Dim {
 public:
  Dim(int64_t v) : expr_(DimExpr::constant(v)) {}
  Dim(int v) : expr_(DimExpr::constant(v)) {}
  Dim(DimExpr e) : expr_(std::move(e)) {}
  Dim(const char* text) : Dim(std::string{text}) {}
  Dim(const std::string& text);

  /// The expression, or the parse error of its text.
  const Result<DimExpr>& expr() const { return expr_; }

 private:
  Result<DimExpr> expr_;
};

/// A value of the program under construction (by name).
struct ValueRef {
  std::string name;
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name = "");

  ValueRef input(std::string name, DType dtype, std::vector<Dim> shape);
  /// A weight (docs/program-format.md, "Weights and states"): concrete
  /// `shape`; `data`, when given, is its inline data, kept as a dense view
  /// that shares the tensor's buffer (no copy: leave it unwritten).
  ValueRef weight(std::string name, DType dtype, std::vector<Dim> shape,
                  std::optional<HostTensor> data = std::nullopt);
  /// A state of concrete `shape` whose storage holds `capacity` bytes or
  /// elements as `unit` says (Shape: the shape's bytes, `capacity` unused).
  ValueRef state(std::string name, DType dtype, std::vector<Dim> shape,
                 CapacityUnit unit = CapacityUnit::Shape, uint64_t capacity = 0);
  /// After a run, `state` holds `value` (an op result that reads it last).
  void state_update(const ValueRef& state, const ValueRef& value);
  void guard(std::string text);
  void output(const ValueRef& value);

  /// Any op of the format: its kind, operands and attributes (of the type
  /// ops.def gives it). `out` empty: an automatic name.
  ValueRef op(OpKind kind, std::vector<ValueRef> operands, OpAttrs attrs = NoAttrs{},
              std::string out = "");
  /// An extension op with `results` results (attributes as JSON object text).
  std::vector<ValueRef> extension(std::string family, std::vector<ValueRef> operands,
                                  std::string attributes_json, size_t results,
                                  std::vector<std::string> outs = {});

  // -- conveniences over op() ------------------------------------------------
  ValueRef unary(OpKind kind, const ValueRef& x, std::string out = "");
  ValueRef binary(OpKind kind, const ValueRef& a, const ValueRef& b, std::string out = "");
  ValueRef compare(CompareDirection dir, const ValueRef& a, const ValueRef& b, std::string out = "");
  ValueRef select(const ValueRef& pred, const ValueRef& on_true, const ValueRef& on_false,
                  std::string out = "");
  ValueRef convert(const ValueRef& x, DType dtype, std::string out = "");
  /// A constant filling `shape` with one scalar.
  ValueRef constant(DType dtype, std::vector<Dim> shape, Scalar value, std::string out = "");
  /// A constant from a dense tensor (concrete shape).
  ValueRef constant(HostTensor value, std::string out = "");
  ValueRef iota(DType dtype, std::vector<Dim> shape, int64_t iota_dimension, std::string out = "");
  ValueRef transpose(const ValueRef& x, std::vector<int64_t> permutation, std::string out = "");
  ValueRef reshape(const ValueRef& x, std::vector<Dim> shape, std::string out = "");
  ValueRef broadcast_in_dim(const ValueRef& x, std::vector<Dim> shape,
                            std::vector<int64_t> broadcast_dimensions, std::string out = "");
  ValueRef reduce(OpKind kind, const ValueRef& x, std::vector<int64_t> dimensions,
                  std::string out = "");
  ValueRef slice(const ValueRef& x, std::vector<Dim> start, std::vector<Dim> limit,
                 std::vector<int64_t> strides = {}, std::string out = "");
  ValueRef dot_general(const ValueRef& lhs, const ValueRef& rhs, DotGeneralAttrs dims,
                       std::string out = "");

  /// The draft as recorded (for saving or inspection).
  const ProgramDraft& draft() const { return draft_; }
  /// Validates the draft; the first recorded builder error comes first.
  Result<SemanticProgram> build(const ExtensionRegistry& extensions = {}) const;
  ValidationReport build_all(const ExtensionRegistry& extensions = {}) const;

 private:
  std::string fresh_name(std::string requested);
  /// The expressions of `shape`; a malformed one is recorded in pending_
  /// ("<where> element <i>: ...") and stands as 0.
  std::vector<DimExpr> dims(const std::vector<Dim>& shape, const std::string& where);
  /// Moves pending_ into errors_, each prefixed with `where` unless empty.
  void flush_pending(const std::string& where);

  ProgramDraft draft_;
  std::vector<Error> errors_;
  /// Errors of the input or op being recorded, before it is named.
  std::vector<Error> pending_;
  size_t next_name_ = 0;
};

}  // namespace tenact
