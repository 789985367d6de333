// NumPy .npy files (format versions 1.0, 2.0, 3.0) and the tensor file helpers.
//
// Reading accepts what NumPy writes: the header is a Python dict literal
// with the keys 'descr', 'fortran_order' and 'shape' in any order (a
// trailing comma, any whitespace, padding spaces and a final newline);
// descr is one of |b1, i1/i2/i4/i8, u1/u2/u4/u8, f2/f4/f8, c8/c16 with byte
// order '<', '>', '=' or '|' (big-endian data is byte-swapped on read, per
// component for complex); Fortran-ordered arrays are transposed into a
// C-order tensor. Bool bytes other than 0 read as true (stored as 1).
//
// bf16 convention (NumPy has no bfloat16): a bf16 tensor is written with
// descr '<V2', two raw bytes per element holding the bfloat16 bit pattern
// little-endian; descr '<V2' or '|V2' reads back as bf16. NumPy loads such a
// file as dtype 'V2'; `a.view('<u2')` gives the bits (and
// `(a.view('<u2').astype('<u4') << 16).view('<f4')` the values).
//
// Rejected with an error naming what is wrong: bad magic, unknown version,
// a header length past the end of the file, a malformed dict, unknown or
// duplicate or missing keys, an unknown descr (named), object and
// structured dtypes, negative or overflowing shape entries, a shape over
// kMaxTensorBytes, data shorter than declared, and trailing bytes after the
// declared data. Every size is checked against the bytes present before
// anything is allocated.
//
// Writing: version 1.0 (2.0 only if the header exceeds 65535 bytes), C
// order, little-endian descr ('|b1', '|i1', '|u1' for one-byte types), the
// header laid out exactly as NumPy 1.24 lays it out (sorted keys, growth
// padding, data starting at a multiple of 64 bytes).
#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/checked.hpp"
#include "core/tensor_io.hpp"

static_assert(std::endian::native == std::endian::little,
              "npy.cpp assumes a little-endian host");

namespace tenact {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kArrayAlign = 64;         // numpy.lib.format.ARRAY_ALIGN
constexpr size_t kGrowthAxisMaxDigits = 21;  // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS

Error npy_error(ErrorCode code, const std::string& message) {
  return Error{code, "npy: " + message};
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// Printable excerpt of untrusted header text for messages.
std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > 40) out += "...";
  return out;
}

struct Descr {
  DType dtype;
  bool big_endian;
};

Result<Descr> parse_descr(std::string_view descr) {
  auto unsupported = [&](const std::string& why) {
    return npy_error(ErrorCode::Unsupported, "unsupported descr '" + excerpt(descr) + "'" + why);
  };
  std::string_view body = descr;
  char order = '=';
  if (!body.empty() && (body[0] == '<' || body[0] == '>' || body[0] == '|' || body[0] == '=')) {
    order = body[0];
    body.remove_prefix(1);
  }
  if (body == "O" || body.starts_with("O"))
    return unsupported(": object arrays are not supported");
  if (body == "V2") {
    if (order == '<' || order == '|') return Descr{DType::BF16, false};
    return unsupported(": bf16 is written '<V2' or '|V2'");
  }
  struct Entry {
    std::string_view code;
    DType dtype;
  };
  static constexpr Entry kTable[] = {
      {"b1", DType::Bool}, {"i1", DType::I8},   {"i2", DType::I16}, {"i4", DType::I32},
      {"i8", DType::I64},  {"u1", DType::U8},   {"u2", DType::U16}, {"u4", DType::U32},
      {"u8", DType::U64},  {"f2", DType::F16},  {"f4", DType::F32}, {"f8", DType::F64},
      {"c8", DType::C64},  {"c16", DType::C128}};
  for (const auto& e : kTable) {
    if (body != e.code) continue;
    if (order == '|' && size_of(e.dtype) != 1)
      return unsupported(": '|' (no byte order) is only for one-byte types");
    return Descr{e.dtype, order == '>'};
  }
  return unsupported("");
}

// -- header dict parser ----------------------------------------------------------

// Plain fields with presence flags (std::optional<std::string> here trips
// g++ 12's -Wmaybe-uninitialized through Result's variant).
struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  bool has_descr = false;
  bool has_fortran_order = false;
  bool has_shape = false;
};

// A recursive-descent reader for the one dict literal NumPy writes. It
// never recurses (the grammar is flat) and never allocates more than the
// header text.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Result<Header> parse() {
    Header h;
    skip_space();
    if (!eat('{')) return fail("expected '{'");
    while (true) {
      skip_space();
      if (eat('}')) break;
      auto key = read_string();
      if (!key) return fail("expected a quoted key");
      skip_space();
      if (!eat(':')) return fail("expected ':' after key '" + excerpt(*key) + "'");
      skip_space();
      if (*key == "descr") {
        if (h.has_descr) return fail("duplicate key 'descr'");
        if (peek() == '[')
          return npy_error(ErrorCode::Unsupported, "structured dtypes are not supported");
        auto v = read_string();
        if (!v) return fail("'descr' must be a quoted string");
        h.descr = std::move(*v);
        h.has_descr = true;
      } else if (*key == "fortran_order") {
        if (h.has_fortran_order) return fail("duplicate key 'fortran_order'");
        if (eat_word("True")) h.fortran_order = true;
        else if (eat_word("False")) h.fortran_order = false;
        else return fail("'fortran_order' must be True or False");
        h.has_fortran_order = true;
      } else if (*key == "shape") {
        if (h.has_shape) return fail("duplicate key 'shape'");
        TENACT_ASSIGN_OR_RETURN(auto shape, read_shape());
        h.shape = std::move(shape);
        h.has_shape = true;
      } else {
        return fail("unknown key '" + excerpt(*key) + "'");
      }
      skip_space();
      if (eat(',')) continue;
      skip_space();
      if (eat('}')) break;
      return fail("expected ',' or '}'");
    }
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected text after the dict");
    if (!h.has_descr) return fail("missing key 'descr'");
    if (!h.has_fortran_order) return fail("missing key 'fortran_order'");
    if (!h.has_shape) return fail("missing key 'shape'");
    return h;
  }

 private:
  Error fail(const std::string& what) const {
    return npy_error(ErrorCode::Parse, "malformed header at byte " + std::to_string(pos_) +
                                           " of the dict: " + what);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool eat_word(std::string_view w) {
    if (text_.substr(pos_).starts_with(w)) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r'))
      ++pos_;
  }
  // A Python string literal in ' or " without escapes (NumPy's descr and
  // keys never need one).
  std::optional<std::string> read_string() {
    const char q = peek();
    if (q != '\'' && q != '"') return std::nullopt;
    const size_t end = text_.find(q, pos_ + 1);
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view body = text_.substr(pos_ + 1, end - pos_ - 1);
    if (body.find('\\') != std::string_view::npos) return std::nullopt;
    pos_ = end + 1;
    return std::string(body);
  }
  // A tuple of non-negative integers: (), (3,), (2, 3), (2, 3,); Python 2's
  // "3L" suffix is accepted. A lone parenthesized integer "(3)" reads as (3,).
  Result<std::vector<int64_t>> read_shape() {
    if (!eat('(')) return fail("'shape' must be a tuple");
    std::vector<int64_t> dims;
    while (true) {
      skip_space();
      if (eat(')')) break;
      if (peek() == '-') return npy_error(ErrorCode::ShapeMismatch, "negative shape entry");
      if (peek() < '0' || peek() > '9') return fail("'shape' entries must be integers");
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        auto next = checked_mul(v, 10);
        if (next) next = checked_add(*next, peek() - '0');
        if (!next) return npy_error(ErrorCode::Overflow, "shape entry does not fit 64 bits");
        v = *next;
        ++pos_;
      }
      eat('L');
      if (dims.size() >= 64) return npy_error(ErrorCode::LimitExceeded, "more than 64 axes");
      dims.push_back(v);
      skip_space();
      if (eat(',')) continue;
      skip_space();
      if (eat(')')) break;
      return fail("expected ',' or ')' in 'shape'");
    }
    return dims;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

uint32_t read_le(const unsigned char* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = n; i > 0; --i) v = (v << 8) | p[i - 1];
  return v;
}

// Reverses the bytes of each `component`-byte group of `n` bytes.
void byte_swap(std::byte* data, size_t n, size_t component) {
  for (size_t i = 0; i + component <= n; i += component) std::reverse(data + i, data + i + component);
}

std::string descr_of(DType t) {
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::I8: return "|i1";
    case DType::I16: return "<i2";
    case DType::I32: return "<i4";
    case DType::I64: return "<i8";
    case DType::U8: return "|u1";
    case DType::U16: return "<u2";
    case DType::U32: return "<u4";
    case DType::U64: return "<u8";
    case DType::F16: return "<f2";
    case DType::BF16: return "<V2";
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
    case DType::C64: return "<c8";
    case DType::C128: return "<c16";
  }
  return "?";
}

// Python's repr of a tuple of ints: (), (3,), (2, 3).
std::string python_tuple(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  if (dims.size() == 1) s += ",";
  return s + ")";
}

bool has_suffix(const std::string& path, std::string_view suffix) {
  return path.size() >= suffix.size() &&
         std::string_view(path).substr(path.size() - suffix.size()) == suffix;
}

}  // namespace

Result<HostTensor> parse_npy(std::string_view bytes) {
  const auto* raw = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < kMagicLen + 2 || std::memcmp(raw, kMagic, kMagicLen) != 0)
    return npy_error(ErrorCode::Parse, "bad magic: not a .npy file");
  const unsigned major = raw[6];
  const unsigned minor = raw[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    return npy_error(ErrorCode::Schema, "unsupported format version " + std::to_string(major) +
                                            "." + std::to_string(minor) +
                                            " (1.0, 2.0 and 3.0 are read)");
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t prefix = kMagicLen + 2 + length_bytes;
  if (bytes.size() < prefix)
    return npy_error(ErrorCode::Parse, "file ends inside the header length field");
  const uint64_t header_len = read_le(raw + kMagicLen + 2, length_bytes);
  if (header_len > bytes.size() - prefix)
    return npy_error(ErrorCode::Parse,
                     "header length " + std::to_string(header_len) +
                         " runs past the end of the file (" + std::to_string(bytes.size()) +
                         " bytes)");
  const std::string_view header_text = bytes.substr(prefix, header_len);
  TENACT_ASSIGN_OR_RETURN(Header header, HeaderParser(header_text).parse());
  TENACT_ASSIGN_OR_RETURN(Descr descr, parse_descr(header.descr));
  std::vector<int64_t> shape = std::move(header.shape);

  auto byte_size = checked_byte_size(descr.dtype, shape);
  if (!byte_size.ok()) return byte_size.error().with_context("npy");
  const uint64_t declared = *byte_size;
  const uint64_t present = bytes.size() - prefix - header_len;
  if (present < declared)
    return npy_error(ErrorCode::Parse, "data is truncated: shape " + shape_text(shape) + " of " +
                                           std::string(to_string(descr.dtype)) + " declares " +
                                           std::to_string(declared) + " bytes, the file has " +
                                           std::to_string(present));
  if (present > declared)
    return npy_error(ErrorCode::Parse, std::to_string(present - declared) +
                                           " bytes of trailing data after the declared " +
                                           std::to_string(declared) + " bytes");

  const std::byte* data = reinterpret_cast<const std::byte*>(raw + prefix + header_len);
  // (an empty array has nothing to reorder, and its Fortran strides could overflow)
  const bool fortran = header.fortran_order && shape.size() > 1 && declared > 0;
  // Fortran data is read into a buffer viewed with column-major strides,
  // then copied to C order.
  std::vector<int64_t> file_shape = shape;
  TENACT_ASSIGN_OR_RETURN(HostTensor tensor, HostTensor::zeros(descr.dtype, std::move(file_shape)));
  std::byte* dst = tensor.data();
  if (declared > 0) std::memcpy(dst, data, static_cast<size_t>(declared));
  const size_t elem = size_of(descr.dtype);
  if (descr.big_endian && elem > 1)
    byte_swap(dst, static_cast<size_t>(declared), is_complex(descr.dtype) ? elem / 2 : elem);
  if (descr.dtype == DType::Bool)
    for (size_t k = 0; k < declared; ++k) dst[k] = dst[k] != std::byte{0} ? std::byte{1} : std::byte{0};
  if (!fortran) return tensor;

  std::vector<int64_t> f_strides(shape.size(), 1);
  for (size_t i = 1; i < shape.size(); ++i) f_strides[i] = f_strides[i - 1] * shape[i - 1];
  TENACT_ASSIGN_OR_RETURN(
      HostTensor column_major,
      HostTensor::view(tensor.buffer(), descr.dtype, shape, std::move(f_strides), 0));
  return column_major.clone();
}

std::string tensor_to_npy(const HostTensor& tensor) {
  // Header exactly as numpy.lib.format._write_array_header writes it.
  std::string header = "{'descr': '" + descr_of(tensor.dtype()) +
                       "', 'fortran_order': False, 'shape': " + python_tuple(tensor.shape()) +
                       ", }";
  if (!tensor.shape().empty()) {
    const size_t digits = std::to_string(tensor.shape()[0]).size();
    if (digits < kGrowthAxisMaxDigits) header.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  const size_t hlen = header.size() + 1;  // + the final newline
  size_t length_bytes = 2;
  size_t pad = kArrayAlign - (kMagicLen + 2 + length_bytes + hlen) % kArrayAlign;
  if (hlen + pad > 65535) {
    length_bytes = 4;
    pad = kArrayAlign - (kMagicLen + 2 + length_bytes + hlen) % kArrayAlign;
  }
  const size_t total_header = hlen + pad;
  const size_t elem = size_of(tensor.dtype());
  const auto count = static_cast<size_t>(tensor.element_count());

  std::string out;
  out.reserve(kMagicLen + 2 + length_bytes + total_header + count * elem);
  out.append(kMagic, kMagicLen);
  out.push_back(static_cast<char>(length_bytes == 2 ? 1 : 2));
  out.push_back(0);
  for (size_t i = 0; i < length_bytes; ++i)
    out.push_back(static_cast<char>((total_header >> (8 * i)) & 0xff));
  out += header;
  out.append(pad, ' ');
  out.push_back('\n');
  if (count == 0 || !tensor.buffer()) return out;
  const std::byte* base = tensor.buffer()->data();
  if (tensor.is_contiguous()) {
    out.append(reinterpret_cast<const char*>(tensor.data()), count * elem);
    return out;
  }
  const size_t start = out.size();
  out.resize(start + count * elem);
  char* dst = out.data() + start;
  for_each_offset(tensor.shape(), tensor.strides(), tensor.offset(), [&](int64_t linear, int64_t off) {
    std::memcpy(dst + static_cast<size_t>(linear) * elem, base + static_cast<size_t>(off) * elem,
                elem);
  });
  return out;
}

// -- files -----------------------------------------------------------------------

Result<std::string> read_file(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Error{ErrorCode::Io, path + ": not a readable regular file" +
                                    (ec ? " (" + ec.message() + ")" : std::string())};
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Error{ErrorCode::Io, path + ": cannot get the file size (" + ec.message() + ")"};
  if (size > max_bytes)
    return Error{ErrorCode::LimitExceeded, path + ": file of " + std::to_string(size) +
                                               " bytes is over the limit of " +
                                               std::to_string(max_bytes) + " bytes"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorCode::Io, path + ": cannot open for reading"};
  std::string bytes;
  try {
    bytes.resize(static_cast<size_t>(size));
  } catch (const std::exception&) {
    return Error{ErrorCode::ResourceExhausted, path + ": cannot allocate " + std::to_string(size) +
                                                 " bytes to read the file"};
  }
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (static_cast<uintmax_t>(in.gcount()) != size)
    return Error{ErrorCode::Io, path + ": read " + std::to_string(in.gcount()) + " of " +
                                    std::to_string(size) + " bytes"};
  return bytes;
}

Status write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{ErrorCode::Io, path + ": cannot open for writing"};
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Error{ErrorCode::Io, path + ": write failed"};
  return ok_status();
}

Result<HostTensor> read_tensor_file(const std::string& path) {
  const bool npy = has_suffix(path, ".npy");
  if (!npy && !has_suffix(path, ".json"))
    return Error{ErrorCode::Io, path + ": unknown tensor file extension (expected .npy or .json)"};
  // Room for the header of a largest tensor; JSON text is bounded the same.
  TENACT_ASSIGN_OR_RETURN(std::string bytes, read_file(path, kMaxTensorBytes + (1u << 20)));
  auto tensor = npy ? parse_npy(bytes) : parse_tensor_json(bytes);
  if (!tensor.ok()) return tensor.error().with_context(path);
  return tensor;
}

Status write_tensor_file(const std::string& path, const HostTensor& tensor) {
  if (has_suffix(path, ".npy")) return write_file(path, tensor_to_npy(tensor));
  if (has_suffix(path, ".json")) return write_file(path, tensor_to_json(tensor));
  return Error{ErrorCode::Io, path + ": unknown tensor file extension (expected .npy or .json)"};
}

}  // namespace tenact
