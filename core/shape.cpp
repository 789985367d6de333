#include "core/shape.hpp"

namespace tenact {

std::string ShapeExtent::to_string() const {
  switch (kind) {
    case ExtentKind::Exact: return expr.to_string();
    case ExtentKind::UpperBound: return "<=" + expr.to_string();
    case ExtentKind::Unknown: return "?";
  }
  return "?";
}

Shape exact_shape(const std::vector<DimExpr>& dims) {
  Shape s;
  s.reserve(dims.size());
  for (const auto& d : dims) s.push_back(ShapeExtent::exact(d));
  return s;
}

Shape exact_shape(std::initializer_list<int64_t> dims) {
  Shape s;
  for (auto d : dims) s.push_back(ShapeExtent::exact(DimExpr::constant(d)));
  return s;
}

namespace {
template <class Seq, class F>
std::string join_bracketed(const Seq& seq, F&& f) {
  std::string out = "[";
  bool first = true;
  for (const auto& x : seq) {
    if (!first) out += ", ";
    first = false;
    out += f(x);
  }
  out += "]";
  return out;
}
}  // namespace

std::string to_string(const Shape& shape) {
  return join_bracketed(shape, [](const ShapeExtent& e) { return e.to_string(); });
}
std::string to_string(const std::vector<DimExpr>& dims) {
  return join_bracketed(dims, [](const DimExpr& e) { return e.to_string(); });
}
std::string to_string(const std::vector<int64_t>& dims) {
  return join_bracketed(dims, [](int64_t v) { return std::to_string(v); });
}
std::string type_string(DType dtype, const Shape& shape) {
  return std::string{to_string(dtype)} + to_string(shape);
}

}  // namespace tenact
