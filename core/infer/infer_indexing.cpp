// Type and shape inference of the indexing family: slice, dynamic_slice,
// dynamic_update_slice, pad, concatenate, reverse, gather, scatter,
// shape_of, dynamic_truncate, pad_to_match.
//
// Contract: the constraints are StableHLO's (docs/spec.md, the C-numbers
// cited per op) with docs/program-format.md's decisions on top. Error codes:
// Schema for arity, TypeMismatch for dtypes, InvalidAttribute for an
// attribute that is wrong on its own or against an operand's rank,
// ShapeMismatch for extents that disagree. A check between an attribute and
// an operand extent goes through the ShapeChecker (decided now or deferred
// to signature time); a check between attribute values alone that fails
// for every value of the symbols is an InvalidAttribute error. Extents that
// are not exact (upper bounds, unknown) are not compared here: the run time
// checks them.
#include <algorithm>
#include <string>
#include <vector>

#include "core/infer/infer.hpp"

namespace tenact::infer {

namespace {

// -- helpers -------------------------------------------------------------------

template <class A>
Result<const A*> attrs_as(const InferRequest& request) {
  if (const A* attrs = std::get_if<A>(&request.attrs)) return attrs;
  return Error{ErrorCode::Internal,
               std::string{to_string(request.kind)} + " reached inference without its attributes"};
}

DimExpr constant(int64_t v) { return DimExpr::constant(v); }

std::string axes_text(std::span<const int64_t> axes) {
  return to_string(std::vector<int64_t>(axes.begin(), axes.end()));
}

bool contains(std::span<const int64_t> axes, int64_t axis) {
  return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

/// `lhs rel rhs` between attribute values: a relation that fails for every
/// value of the symbols is an InvalidAttribute error; one that depends on
/// them is deferred through the checker.
Status require_attribute(ShapeChecker& checker, const DimExpr& lhs, Relation rel,
                         const DimExpr& rhs, const std::string& what) {
  if (decide(lhs, rel, rhs) == Decision::Fails)
    return attribute_error(what + " (" + lhs.to_string() + " " + std::string{to_string(rel)} +
                           " " + rhs.to_string() + " never holds)");
  return checker.require(lhs, rel, rhs, what);
}

/// `value <= extent` when the extent is exact; skipped otherwise (run time).
Status require_within(ShapeChecker& checker, const DimExpr& value, const ShapeExtent& extent,
                      const std::string& what) {
  if (!extent.is_exact()) return ok_status();
  return checker.require(value, Relation::Le, extent.expr, what);
}

/// The extent of a result axis that must equal both `a` and `b`: a
/// run-time-only extent is the less known one and wins (as unify_shapes).
ShapeExtent merge_extents(const ShapeExtent& a, const ShapeExtent& b) {
  if (!a.is_exact()) return a;
  return b.is_exact() ? a : b;
}

Status check_entry_count(size_t count, size_t rank, std::string_view attribute,
                         std::string_view rank_of) {
  if (count == rank) return ok_status();
  return attribute_error(std::string{attribute} + " has " + std::to_string(count) +
                         " entries, expected " + std::to_string(rank) + " (the rank of " +
                         std::string{rank_of} + ")");
}

Status check_sorted(std::span<const int64_t> axes, std::string_view attribute) {
  if (std::is_sorted(axes.begin(), axes.end())) return ok_status();
  return attribute_error(std::string{attribute} + " " + axes_text(axes) +
                         " is not sorted in ascending order");
}

/// Errors when an axis appears in both lists.
Status check_disjoint(std::span<const int64_t> a, std::string_view a_name,
                      std::span<const int64_t> b, std::string_view b_name) {
  for (int64_t axis : a)
    if (contains(b, axis))
      return attribute_error("dimension " + std::to_string(axis) + " appears in both " +
                             std::string{a_name} + " " + axes_text(a) + " and " +
                             std::string{b_name} + " " + axes_text(b));
  return ok_status();
}

/// A scalar of an integer dtype (a start index, a length).
Status expect_integer_scalar(const ValueType& t, const std::string& name) {
  if (!is_scalar(t))
    return shape_error(name + " must be a scalar, got " + t.to_string());
  if (!is_integer(t.dtype))
    return type_error(name + " must have an integer dtype, got " + std::string{to_string(t.dtype)});
  return ok_status();
}

/// operands[first..] are one start index per axis: integer scalars sharing
/// one dtype (StableHLO dynamic_slice C2-C3, dynamic_update_slice C4-C5).
Status check_start_indices(std::span<const ValueType> operands, size_t first, size_t rank,
                           std::string_view op) {
  if (operands.size() != first + rank)
    return expect_arity(operands, first + rank)
        .error()
        .with_context(std::string{op} + " takes one start index per axis of its operand (rank " +
                      std::to_string(rank) + ")");
  for (size_t i = first; i < operands.size(); ++i) {
    const std::string name =
        operand_name(i) + " (start index for axis " + std::to_string(i - first) + ")";
    TENACT_TRY(expect_integer_scalar(operands[i], name));
    if (operands[i].dtype != operands[first].dtype)
      return type_error(name + " has dtype " + std::string{to_string(operands[i].dtype)} +
                        ", expected " + std::string{to_string(operands[first].dtype)} +
                        " (start indices share one dtype, that of " + operand_name(first) + ")");
  }
  return ok_status();
}

/// size(index map) must be dim(indices, index_vector_dim), or 1 when
/// index_vector_dim == rank(indices) (gather C3, scatter C19).
Status check_index_vector_length(ShapeChecker& checker, const ValueType& indices,
                                 std::string_view indices_name, int64_t index_vector_dim,
                                 size_t map_size, std::string_view map_name) {
  const std::string map_text = std::string{map_name} + " has " + std::to_string(map_size) +
                               " entries";
  if (static_cast<size_t>(index_vector_dim) == indices.rank()) {
    if (map_size == 1) return ok_status();
    return attribute_error(map_text + ", expected 1 (index_vector_dim " +
                           std::to_string(index_vector_dim) + " is the rank of " +
                           std::string{indices_name} + ")");
  }
  const ShapeExtent& extent = indices.shape[static_cast<size_t>(index_vector_dim)];
  if (!extent.is_exact()) return ok_status();
  return require_attribute(checker, constant(static_cast<int64_t>(map_size)), Relation::Eq,
                           extent.expr,
                           map_text + " and " + std::string{indices_name} + " axis " +
                               std::to_string(index_vector_dim) +
                               " (index_vector_dim) has as many");
}

/// Shared by gather and scatter: the operand-side batching axes and the
/// index-side batching axes pair up (gather C13-C17, scatter C14-C18).
Status check_batching_pairs(ShapeChecker& checker, const ValueType& operand,
                            std::span<const int64_t> operand_axes, std::string_view operand_attr,
                            const ValueType& indices, std::span<const int64_t> index_axes,
                            std::string_view index_attr, std::string_view indices_name,
                            int64_t index_vector_dim) {
  TENACT_TRY(check_unique_axes(index_axes, indices.rank(), index_attr));
  if (contains(index_axes, index_vector_dim))
    return attribute_error(std::string{index_attr} + " " + axes_text(index_axes) +
                           " contains index_vector_dim " + std::to_string(index_vector_dim));
  if (operand_axes.size() != index_axes.size())
    return attribute_error(std::string{operand_attr} + " " + axes_text(operand_axes) + " and " +
                           std::string{index_attr} + " " + axes_text(index_axes) +
                           " have different sizes");
  for (size_t i = 0; i < operand_axes.size(); ++i) {
    const size_t oa = static_cast<size_t>(operand_axes[i]);
    const size_t ia = static_cast<size_t>(index_axes[i]);
    TENACT_TRY(checker.require_equal(
        operand.shape[oa], indices.shape[ia],
        "operand axis " + std::to_string(oa) + " (" + std::string{operand_attr} + "[" +
            std::to_string(i) + "]) and " + std::string{indices_name} + " axis " +
            std::to_string(ia) + " (" + std::string{index_attr} + "[" + std::to_string(i) +
            "]) have equal sizes"));
  }
  return ok_status();
}

/// The axes of `indices` other than index_vector_dim, with their extents.
Shape index_batch_extents(const ValueType& indices, int64_t index_vector_dim) {
  Shape out;
  for (size_t d = 0; d < indices.rank(); ++d)
    if (static_cast<int64_t>(d) != index_vector_dim) out.push_back(indices.shape[d]);
  return out;
}

// -- slice ------------------------------------------------------------------------

// StableHLO slice C1-C5.
InferResult infer_slice(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 1));
  TENACT_ASSIGN_OR_RETURN(const SliceAttrs* a, attrs_as<SliceAttrs>(r));
  const ValueType& operand = r.operands[0];
  const size_t rank = operand.rank();
  TENACT_TRY(check_entry_count(a->start_indices.size(), rank, "start_indices", "the operand"));
  TENACT_TRY(check_entry_count(a->limit_indices.size(), rank, "limit_indices", "the operand"));
  // An empty `strides` is the default (all 1).
  std::vector<int64_t> strides = a->strides.empty() ? std::vector<int64_t>(rank, 1) : a->strides;
  TENACT_TRY(check_entry_count(strides.size(), rank, "strides", "the operand"));
  Shape result;
  for (size_t i = 0; i < rank; ++i) {
    const std::string axis = std::to_string(i);
    const DimExpr& start = a->start_indices[i];
    const DimExpr& limit = a->limit_indices[i];
    if (strides[i] <= 0)
      return attribute_error("strides[" + axis + "] is " + std::to_string(strides[i]) +
                             ", must be positive");
    TENACT_TRY(require_attribute(r.checker, start, Relation::Ge, constant(0),
                                 "start_indices[" + axis + "] is non-negative"));
    TENACT_TRY(require_attribute(r.checker, start, Relation::Le, limit,
                                 "start_indices[" + axis + "] is at most limit_indices[" + axis +
                                     "]"));
    TENACT_TRY(require_within(r.checker, limit, operand.shape[i],
                              "limit_indices[" + axis + "] is at most operand axis " + axis +
                                  " (" + operand.shape[i].to_string() + ")"));
    const DimExpr span = limit - start;
    const int64_t stride = strides[i];
    result.push_back(ShapeExtent::exact(
        stride == 1 ? span : DimExpr::floor_div(span + constant(stride - 1), constant(stride))));
  }
  return std::vector<ValueType>{{operand.dtype, std::move(result)}};
}

// -- dynamic_slice / dynamic_update_slice -------------------------------------------

// StableHLO dynamic_slice C1-C5.
InferResult infer_dynamic_slice(const InferRequest& r) {
  TENACT_TRY(expect_arity_at_least(r.operands, 1));
  TENACT_ASSIGN_OR_RETURN(const DynamicSliceAttrs* a, attrs_as<DynamicSliceAttrs>(r));
  const ValueType& operand = r.operands[0];
  const size_t rank = operand.rank();
  TENACT_TRY(check_start_indices(r.operands, 1, rank, "dynamic_slice"));
  TENACT_TRY(check_entry_count(a->slice_sizes.size(), rank, "slice_sizes", "the operand"));
  for (size_t i = 0; i < rank; ++i) {
    const std::string axis = std::to_string(i);
    TENACT_TRY(require_attribute(r.checker, a->slice_sizes[i], Relation::Ge, constant(0),
                                 "slice_sizes[" + axis + "] is non-negative"));
    TENACT_TRY(require_within(r.checker, a->slice_sizes[i], operand.shape[i],
                              "slice_sizes[" + axis + "] is at most operand axis " + axis + " (" +
                                  operand.shape[i].to_string() + ")"));
  }
  return std::vector<ValueType>{{operand.dtype, exact_shape(a->slice_sizes)}};
}

// StableHLO dynamic_update_slice C1-C6.
InferResult infer_dynamic_update_slice(const InferRequest& r) {
  TENACT_TRY(expect_arity_at_least(r.operands, 2));
  const ValueType& operand = r.operands[0];
  const ValueType& update = r.operands[1];
  if (update.dtype != operand.dtype)
    return type_error("update (operand 1) has dtype " + std::string{to_string(update.dtype)} +
                      ", expected " + std::string{to_string(operand.dtype)} +
                      " (the operand's dtype)");
  if (update.rank() != operand.rank())
    return shape_error("update (operand 1) has shape " + to_string(update.shape) + " of rank " +
                       std::to_string(update.rank()) + ", expected rank " +
                       std::to_string(operand.rank()) + " (the operand's shape is " +
                       to_string(operand.shape) + ")");
  TENACT_TRY(check_start_indices(r.operands, 2, operand.rank(), "dynamic_update_slice"));
  for (size_t i = 0; i < operand.rank(); ++i) {
    if (!update.shape[i].is_exact()) continue;  // run time
    const std::string axis = std::to_string(i);
    TENACT_TRY(require_within(r.checker, update.shape[i].expr, operand.shape[i],
                              "update axis " + axis + " (" + update.shape[i].to_string() +
                                  ") is at most operand axis " + axis + " (" +
                                  operand.shape[i].to_string() + ")"));
  }
  return std::vector<ValueType>{operand};
}

// -- pad -----------------------------------------------------------------------------

// StableHLO pad C1-C4; negative edge padding removes elements.
InferResult infer_pad(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 2));
  TENACT_ASSIGN_OR_RETURN(const PadAttrs* a, attrs_as<PadAttrs>(r));
  const ValueType& operand = r.operands[0];
  const ValueType& value = r.operands[1];
  const size_t rank = operand.rank();
  if (!is_scalar(value))
    return shape_error("padding_value (operand 1) must be a scalar, got " + value.to_string());
  if (value.dtype != operand.dtype)
    return type_error("padding_value (operand 1) has dtype " + std::string{to_string(value.dtype)} +
                      ", expected " + std::string{to_string(operand.dtype)} +
                      " (the operand's dtype)");
  TENACT_TRY(check_entry_count(a->edge_padding_low.size(), rank, "edge_padding_low", "the operand"));
  TENACT_TRY(
      check_entry_count(a->edge_padding_high.size(), rank, "edge_padding_high", "the operand"));
  // An empty `interior_padding` is the default (all 0).
  const std::vector<DimExpr> interior = a->interior_padding.empty()
                                            ? std::vector<DimExpr>(rank, constant(0))
                                            : a->interior_padding;
  TENACT_TRY(check_entry_count(interior.size(), rank, "interior_padding", "the operand"));
  Shape result;
  for (size_t i = 0; i < rank; ++i) {
    const std::string axis = std::to_string(i);
    TENACT_TRY(require_attribute(r.checker, interior[i], Relation::Ge, constant(0),
                                 "interior_padding[" + axis + "] is non-negative"));
    const ShapeExtent& in = operand.shape[i];
    if (in.kind == ExtentKind::Unknown) {
      result.push_back(in);
      continue;
    }
    // low + dim + max(dim - 1, 0) * interior + high; non-decreasing in dim,
    // so an upper bound of dim gives an upper bound of the result.
    const DimExpr size = a->edge_padding_low[i] + in.expr +
                         DimExpr::max(in.expr - constant(1), constant(0)) * interior[i] +
                         a->edge_padding_high[i];
    if (in.is_exact()) {
      TENACT_TRY(r.checker.require_non_negative(
          size, "padded axis " + axis + " (" + size.to_string() + ") is non-negative"));
      result.push_back(ShapeExtent::exact(size));
    } else {
      result.push_back(ShapeExtent::upper_bound(size));
    }
  }
  return std::vector<ValueType>{{operand.dtype, std::move(result)}};
}

// -- concatenate / reverse -----------------------------------------------------------

// StableHLO concatenate C1-C6.
InferResult infer_concatenate(const InferRequest& r) {
  TENACT_TRY(expect_arity_at_least(r.operands, 1));
  TENACT_ASSIGN_OR_RETURN(const ConcatenateAttrs* a, attrs_as<ConcatenateAttrs>(r));
  const ValueType& first = r.operands[0];
  TENACT_TRY(check_axis(a->dimension, first.rank(), "dimension"));
  const size_t dim = static_cast<size_t>(a->dimension);
  Shape result = first.shape;
  bool any_unknown = first.shape[dim].kind == ExtentKind::Unknown;
  bool any_bound = first.shape[dim].kind == ExtentKind::UpperBound;
  DimExpr total = first.shape[dim].expr;
  for (size_t k = 1; k < r.operands.size(); ++k) {
    const ValueType& t = r.operands[k];
    if (t.dtype != first.dtype)
      return type_error(operand_name(k) + " has dtype " + std::string{to_string(t.dtype)} +
                        ", expected " + std::string{to_string(first.dtype)} +
                        " (the dtype of operand 0)");
    if (t.rank() != first.rank())
      return shape_error(operand_name(k) + " has shape " + to_string(t.shape) + " of rank " +
                         std::to_string(t.rank()) + ", expected rank " +
                         std::to_string(first.rank()) + " (the shape of operand 0 is " +
                         to_string(first.shape) + ")");
    for (size_t i = 0; i < t.rank(); ++i) {
      if (i == dim) continue;
      TENACT_TRY(r.checker.require_equal(
          first.shape[i], t.shape[i],
          operand_name(k) + " axis " + std::to_string(i) + " (" + t.shape[i].to_string() +
              ") equals operand 0 axis " + std::to_string(i) + " (" +
              first.shape[i].to_string() + ")"));
      result[i] = merge_extents(result[i], t.shape[i]);
    }
    any_unknown = any_unknown || t.shape[dim].kind == ExtentKind::Unknown;
    any_bound = any_bound || t.shape[dim].kind == ExtentKind::UpperBound;
    total = total + t.shape[dim].expr;
  }
  result[dim] = any_unknown ? ShapeExtent::unknown()
                : any_bound ? ShapeExtent::upper_bound(total)
                            : ShapeExtent::exact(total);
  return std::vector<ValueType>{{first.dtype, std::move(result)}};
}

// StableHLO reverse C1-C3.
InferResult infer_reverse(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 1));
  TENACT_ASSIGN_OR_RETURN(const ReverseAttrs* a, attrs_as<ReverseAttrs>(r));
  TENACT_TRY(check_unique_axes(a->dimensions, r.operands[0].rank(), "dimensions"));
  return std::vector<ValueType>{r.operands[0]};
}

// -- gather ----------------------------------------------------------------------------

// StableHLO gather C1-C23 (with batching dimensions); a collapsed or
// batching axis needs slice size exactly 1 (docs/program-format.md).
InferResult infer_gather(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 2));
  TENACT_ASSIGN_OR_RETURN(const GatherAttrs* a, attrs_as<GatherAttrs>(r));
  const ValueType& operand = r.operands[0];
  const ValueType& indices = r.operands[1];
  const size_t operand_rank = operand.rank();
  const size_t indices_rank = indices.rank();
  const int64_t ivd = a->index_vector_dim;
  if (!is_integer(indices.dtype))
    return type_error("start_indices (operand 1) must have an integer dtype, got " +
                      std::string{to_string(indices.dtype)});
  // C1
  const size_t window_axes = a->offset_dims.size() + a->collapsed_slice_dims.size() +
                             a->operand_batching_dims.size();
  if (window_axes != operand_rank)
    return attribute_error(
        "offset_dims " + axes_text(a->offset_dims) + ", collapsed_slice_dims " +
        axes_text(a->collapsed_slice_dims) + " and operand_batching_dims " +
        axes_text(a->operand_batching_dims) + " have " + std::to_string(window_axes) +
        " entries together, expected " + std::to_string(operand_rank) + " (the operand's rank)");
  // C2
  if (ivd < 0 || static_cast<size_t>(ivd) > indices_rank)
    return attribute_error("index_vector_dim " + std::to_string(ivd) + " is out of range [0, " +
                           std::to_string(indices_rank) + "] for start_indices of rank " +
                           std::to_string(indices_rank));
  const bool explicit_vector = static_cast<size_t>(ivd) < indices_rank;
  // C3
  TENACT_TRY(check_index_vector_length(r.checker, indices, "start_indices", ivd,
                                       a->start_index_map.size(), "start_index_map"));
  // C4, C5
  const size_t result_rank = a->offset_dims.size() + indices_rank - (explicit_vector ? 1 : 0);
  TENACT_TRY(check_unique_axes(a->offset_dims, result_rank, "offset_dims"));
  TENACT_TRY(check_sorted(a->offset_dims, "offset_dims"));
  // C6-C8, C10-C11
  TENACT_TRY(check_unique_axes(a->collapsed_slice_dims, operand_rank, "collapsed_slice_dims"));
  TENACT_TRY(check_sorted(a->collapsed_slice_dims, "collapsed_slice_dims"));
  TENACT_TRY(check_unique_axes(a->operand_batching_dims, operand_rank, "operand_batching_dims"));
  TENACT_TRY(check_sorted(a->operand_batching_dims, "operand_batching_dims"));
  TENACT_TRY(check_disjoint(a->collapsed_slice_dims, "collapsed_slice_dims",
                            a->operand_batching_dims, "operand_batching_dims"));
  // C13-C17
  TENACT_TRY(check_batching_pairs(r.checker, operand, a->operand_batching_dims,
                                  "operand_batching_dims", indices,
                                  a->start_indices_batching_dims, "start_indices_batching_dims",
                                  "start_indices", ivd));
  // C18, C19
  TENACT_TRY(check_unique_axes(a->start_index_map, operand_rank, "start_index_map"));
  TENACT_TRY(check_disjoint(a->start_index_map, "start_index_map", a->operand_batching_dims,
                            "operand_batching_dims"));
  // C20, C21, C9, C12
  TENACT_TRY(check_entry_count(a->slice_sizes.size(), operand_rank, "slice_sizes", "the operand"));
  Shape offset_sizes;
  for (size_t i = 0; i < operand_rank; ++i) {
    const std::string axis = std::to_string(i);
    const DimExpr& size = a->slice_sizes[i];
    TENACT_TRY(require_attribute(r.checker, size, Relation::Ge, constant(0),
                                 "slice_sizes[" + axis + "] is non-negative"));
    TENACT_TRY(require_within(r.checker, size, operand.shape[i],
                              "slice_sizes[" + axis + "] is at most operand axis " + axis + " (" +
                                  operand.shape[i].to_string() + ")"));
    const bool collapsed = contains(a->collapsed_slice_dims, static_cast<int64_t>(i));
    const bool batching = contains(a->operand_batching_dims, static_cast<int64_t>(i));
    if (collapsed || batching) {
      TENACT_TRY(require_attribute(
          r.checker, size, Relation::Eq, constant(1),
          "slice_sizes[" + axis + "] is 1 (axis " + axis + " is in " +
              (collapsed ? "collapsed_slice_dims" : "operand_batching_dims") + ")"));
    } else {
      offset_sizes.push_back(ShapeExtent::exact(size));
    }
  }
  // C22, C23
  const Shape batch_sizes = index_batch_extents(indices, ivd);
  Shape result;
  size_t next_offset = 0, next_batch = 0;
  for (size_t d = 0; d < result_rank; ++d) {
    if (contains(a->offset_dims, static_cast<int64_t>(d)))
      result.push_back(offset_sizes[next_offset++]);
    else
      result.push_back(batch_sizes[next_batch++]);
  }
  return std::vector<ValueType>{{operand.dtype, std::move(result)}};
}

// -- scatter --------------------------------------------------------------------------

// StableHLO scatter C1-C25 for one input. Every `update` mode accepts every
// dtype: on bool add is or and multiply is and, max/min order complex
// lexicographically (docs/program-format.md), as the binary ops do.
InferResult infer_scatter(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 3));
  TENACT_ASSIGN_OR_RETURN(const ScatterAttrs* a, attrs_as<ScatterAttrs>(r));
  const ValueType& operand = r.operands[0];
  const ValueType& indices = r.operands[1];
  const ValueType& updates = r.operands[2];
  const size_t operand_rank = operand.rank();
  const size_t indices_rank = indices.rank();
  const int64_t ivd = a->index_vector_dim;
  if (!is_integer(indices.dtype))
    return type_error("scatter_indices (operand 1) must have an integer dtype, got " +
                      std::string{to_string(indices.dtype)});
  // C6
  if (updates.dtype != operand.dtype)
    return type_error("updates (operand 2) has dtype " + std::string{to_string(updates.dtype)} +
                      ", expected " + std::string{to_string(operand.dtype)} +
                      " (the operand's dtype)");
  // C2
  const size_t window_axes = a->update_window_dims.size() + a->inserted_window_dims.size() +
                             a->input_batching_dims.size();
  if (window_axes != operand_rank)
    return attribute_error(
        "update_window_dims " + axes_text(a->update_window_dims) + ", inserted_window_dims " +
        axes_text(a->inserted_window_dims) + " and input_batching_dims " +
        axes_text(a->input_batching_dims) + " have " + std::to_string(window_axes) +
        " entries together, expected " + std::to_string(operand_rank) + " (the operand's rank)");
  // C22
  if (ivd < 0 || static_cast<size_t>(ivd) > indices_rank)
    return attribute_error("index_vector_dim " + std::to_string(ivd) + " is out of range [0, " +
                           std::to_string(indices_rank) + "] for scatter_indices of rank " +
                           std::to_string(indices_rank));
  // C19
  TENACT_TRY(check_index_vector_length(r.checker, indices, "scatter_indices", ivd,
                                       a->scatter_dims_to_operand_dims.size(),
                                       "scatter_dims_to_operand_dims"));
  // C7, C8
  TENACT_TRY(check_unique_axes(a->update_window_dims, updates.rank(), "update_window_dims"));
  TENACT_TRY(check_sorted(a->update_window_dims, "update_window_dims"));
  // C9-C13
  TENACT_TRY(check_unique_axes(a->inserted_window_dims, operand_rank, "inserted_window_dims"));
  TENACT_TRY(check_sorted(a->inserted_window_dims, "inserted_window_dims"));
  TENACT_TRY(check_unique_axes(a->input_batching_dims, operand_rank, "input_batching_dims"));
  TENACT_TRY(check_sorted(a->input_batching_dims, "input_batching_dims"));
  TENACT_TRY(check_disjoint(a->inserted_window_dims, "inserted_window_dims",
                            a->input_batching_dims, "input_batching_dims"));
  // C14-C18
  TENACT_TRY(check_batching_pairs(r.checker, operand, a->input_batching_dims,
                                  "input_batching_dims", indices,
                                  a->scatter_indices_batching_dims,
                                  "scatter_indices_batching_dims", "scatter_indices", ivd));
  // C20, C21
  TENACT_TRY(check_unique_axes(a->scatter_dims_to_operand_dims, operand_rank,
                               "scatter_dims_to_operand_dims"));
  TENACT_TRY(check_disjoint(a->scatter_dims_to_operand_dims, "scatter_dims_to_operand_dims",
                            a->input_batching_dims, "input_batching_dims"));
  // C4: updates = scatter axes of the indices at update_scatter_dims, and
  // windows no larger than the operand's window axes at update_window_dims.
  const Shape scatter_sizes = index_batch_extents(indices, ivd);
  const size_t expected_rank = a->update_window_dims.size() + scatter_sizes.size();
  if (updates.rank() != expected_rank)
    return shape_error("updates (operand 2) has shape " + to_string(updates.shape) + " of rank " +
                       std::to_string(updates.rank()) + ", expected rank " +
                       std::to_string(expected_rank) + " (" +
                       std::to_string(a->update_window_dims.size()) +
                       " update_window_dims and " + std::to_string(scatter_sizes.size()) +
                       " scatter axes of scatter_indices " + to_string(indices.shape) + ")");
  std::vector<size_t> window_operand_axes;
  for (size_t i = 0; i < operand_rank; ++i)
    if (!contains(a->inserted_window_dims, static_cast<int64_t>(i)) &&
        !contains(a->input_batching_dims, static_cast<int64_t>(i)))
      window_operand_axes.push_back(i);
  size_t next_scatter = 0, next_window = 0;
  for (size_t d = 0; d < updates.rank(); ++d) {
    const std::string axis = std::to_string(d);
    if (contains(a->update_window_dims, static_cast<int64_t>(d))) {
      const size_t oa = window_operand_axes[next_window++];
      if (!updates.shape[d].is_exact()) continue;  // run time
      TENACT_TRY(require_within(r.checker, updates.shape[d].expr, operand.shape[oa],
                                "updates axis " + axis + " (" + updates.shape[d].to_string() +
                                    ") is at most operand axis " + std::to_string(oa) + " (" +
                                    operand.shape[oa].to_string() + ")"));
    } else {
      const ShapeExtent& expected = scatter_sizes[next_scatter++];
      TENACT_TRY(r.checker.require_equal(
          updates.shape[d], expected,
          "updates axis " + axis + " (" + updates.shape[d].to_string() +
              ") equals the matching scatter axis of scatter_indices (" + expected.to_string() +
              ")"));
    }
  }
  // C24, C25
  return std::vector<ValueType>{operand};
}

// -- shape_of / dynamic_truncate / pad_to_match ------------------------------------

InferResult infer_shape_of(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 1));
  const int64_t rank = static_cast<int64_t>(r.operands[0].rank());
  return std::vector<ValueType>{{DType::I64, exact_shape({rank})}};
}

// The truncated axis keeps its expression as an upper bound; an unknown
// extent stays unknown.
InferResult infer_dynamic_truncate(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 2));
  TENACT_ASSIGN_OR_RETURN(const DynamicTruncateAttrs* a, attrs_as<DynamicTruncateAttrs>(r));
  const ValueType& x = r.operands[0];
  TENACT_TRY(expect_integer_scalar(r.operands[1], "length (operand 1)"));
  TENACT_TRY(check_axis(a->dimension, x.rank(), "dimension"));
  ValueType result = x;
  ShapeExtent& extent = result.shape[static_cast<size_t>(a->dimension)];
  if (extent.kind != ExtentKind::Unknown) extent = ShapeExtent::upper_bound(extent.expr);
  return std::vector<ValueType>{std::move(result)};
}

// Result: x's dtype, like's extents. `like` is read for its shape only, so
// its dtype is free.
InferResult infer_pad_to_match(const InferRequest& r) {
  TENACT_TRY(expect_arity(r.operands, 2));
  TENACT_ASSIGN_OR_RETURN(const PadToMatchAttrs* a, attrs_as<PadToMatchAttrs>(r));
  const ValueType& x = r.operands[0];
  const ValueType& like = r.operands[1];
  if (like.rank() != x.rank())
    return shape_error("like (operand 1) has shape " + to_string(like.shape) + " of rank " +
                       std::to_string(like.rank()) + ", expected rank " +
                       std::to_string(x.rank()) + " (the shape of x is " + to_string(x.shape) +
                       ")");
  if (a->value) {
    Status fits = a->value->check_fits(x.dtype);
    if (!fits.ok())
      return attribute_error("value " + a->value->to_string() + " does not fit x's dtype " +
                             std::string{to_string(x.dtype)} + ": " + fits.error().message());
  }
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!x.shape[i].is_exact()) continue;  // run time
    const std::string axis = std::to_string(i);
    TENACT_TRY(require_within(r.checker, x.shape[i].expr, like.shape[i],
                              "x axis " + axis + " (" + x.shape[i].to_string() +
                                  ") is at most like axis " + axis + " (" +
                                  like.shape[i].to_string() + ")"));
  }
  return std::vector<ValueType>{{x.dtype, like.shape}};
}

}  // namespace

InferResult infer_indexing(const InferRequest& request) {
  switch (request.kind) {
    case OpKind::Slice: return infer_slice(request);
    case OpKind::DynamicSlice: return infer_dynamic_slice(request);
    case OpKind::DynamicUpdateSlice: return infer_dynamic_update_slice(request);
    case OpKind::Pad: return infer_pad(request);
    case OpKind::Concatenate: return infer_concatenate(request);
    case OpKind::Reverse: return infer_reverse(request);
    case OpKind::Gather: return infer_gather(request);
    case OpKind::Scatter: return infer_scatter(request);
    case OpKind::ShapeOf: return infer_shape_of(request);
    case OpKind::DynamicTruncate: return infer_dynamic_truncate(request);
    case OpKind::PadToMatch: return infer_pad_to_match(request);
    default: break;
  }
  return Error{ErrorCode::Internal,
               std::string{to_string(request.kind)} + " is not an indexing op"};
}

}  // namespace tenact::infer
