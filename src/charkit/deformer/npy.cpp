#include "charkit/deformer/npy.h"

#include <zip.h>
#include <zlib.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <string_view>

#include "charkit/core/error_codes.h"
#include "charkit/deformer/error_codes.h"

namespace charkit::deformer {

using core::make_error;

namespace {

constexpr std::string_view kNpyMagic = "\x93NUMPY";

std::optional<NpyDType> dtype_from_descr(std::string_view d) {
  if (d == "<f4") return NpyDType::kF4;
  if (d == "<f8") return NpyDType::kF8;
  if (d == "<i4") return NpyDType::kI4;
  if (d == "<i8") return NpyDType::kI8;
  if (d == "|u1" || d == "<u1") return NpyDType::kU1;
  if (d == "|b1") return NpyDType::kB1;
  return std::nullopt;
}

/// Cursor over the header dict (a Python literal). Offsets are file offsets.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::uint64_t base) : t_(text), base_(base) {}

  struct Parsed {
    std::string descr;
    bool fortran = false;
    std::vector<std::uint64_t> shape;
  };

  core::Result<Parsed> parse(std::size_t max_dims) {
    Parsed out;
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    if (!eat('{')) return fail("expected '{'");
    skip_ws();
    while (!peek('}')) {
      auto key = string();
      if (!key) return fail("expected a quoted key");
      skip_ws();
      if (!eat(':')) return fail("expected ':' after key");
      skip_ws();
      if (*key == "descr") {
        if (have_descr) return fail("key 'descr' repeated");
        have_descr = true;
        auto v = string();
        if (!v) return fail("'descr' must be a quoted string");
        out.descr = *v;
      } else if (*key == "fortran_order") {
        if (have_fortran) return fail("key 'fortran_order' repeated");
        have_fortran = true;
        if (word("True"))
          out.fortran = true;
        else if (word("False"))
          out.fortran = false;
        else
          return fail("'fortran_order' must be True or False");
      } else if (*key == "shape") {
        if (have_shape) return fail("key 'shape' repeated");
        have_shape = true;
        if (auto st = shape(out.shape, max_dims); !st) return std::move(st).error();
      } else {
        return fail("unexpected key '" + *key + "'");
      }
      skip_ws();
      if (eat(',')) {
        skip_ws();
        continue;
      }
      if (!peek('}')) return fail("expected ',' or '}'");
    }
    eat('}');
    if (!have_descr || !have_fortran || !have_shape)
      return fail("the dict needs the keys 'descr', 'fortran_order' and 'shape'");
    skip_ws();
    if (pos_ != t_.size()) return fail("unexpected text after the dict");
    return out;
  }

 private:
  core::Error fail(std::string msg) const {
    return core::error_at_offset(codes::NPY_HEADER, "header: " + std::move(msg), base_ + pos_);
  }
  void skip_ws() {
    while (pos_ < t_.size() && t_[pos_] == ' ') ++pos_;
  }
  bool peek(char c) const { return pos_ < t_.size() && t_[pos_] == c; }
  bool eat(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  bool word(std::string_view w) {
    if (t_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  std::optional<std::string> string() {
    if (pos_ >= t_.size() || (t_[pos_] != '\'' && t_[pos_] != '"')) return std::nullopt;
    const char q = t_[pos_];
    std::size_t p = pos_ + 1;
    std::string s;
    while (p < t_.size() && t_[p] != q) {
      const char c = t_[p];
      if (c == '\\' || c < 0x20 || c > 0x7e) return std::nullopt;  // no escapes, ASCII only
      s.push_back(c);
      ++p;
    }
    if (p >= t_.size()) return std::nullopt;
    pos_ = p + 1;
    return s;
  }
  core::Status shape(std::vector<std::uint64_t>& dims, std::size_t max_dims) {
    if (!eat('(')) return fail("'shape' must be a tuple");
    skip_ws();
    bool trailing_comma = false;
    while (!peek(')')) {
      if (pos_ >= t_.size() || t_[pos_] < '0' || t_[pos_] > '9')
        return fail("shape entries must be non-negative integers");
      if (t_[pos_] == '0' && pos_ + 1 < t_.size() && t_[pos_ + 1] >= '0' && t_[pos_ + 1] <= '9')
        return fail("shape entry with a leading zero");
      std::uint64_t v = 0;
      while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9') {
        const auto digit = static_cast<std::uint64_t>(t_[pos_] - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
          return core::error_at_offset(codes::NPY_SHAPE, "shape entry too large", base_ + pos_);
        v = v * 10 + digit;
        ++pos_;
      }
      if (dims.size() >= max_dims)
        return core::error_at_offset(codes::NPY_SHAPE,
                                     "more than " + std::to_string(max_dims) + " dimensions",
                                     base_ + pos_);
      dims.push_back(v);
      skip_ws();
      trailing_comma = eat(',');
      skip_ws();
      if (!trailing_comma && !peek(')')) return fail("expected ',' or ')' in shape");
    }
    // Python: (5) is an int, (5,) a tuple.
    if (dims.size() == 1 && !trailing_comma) return fail("a 1-d shape needs a trailing comma");
    eat(')');
    return core::Ok{};
  }

  std::string_view t_;
  std::uint64_t base_;
  std::size_t pos_ = 0;
};

template <typename T>
NpyArray make_array(NpyDType t, std::vector<std::uint64_t> shape, std::span<const T> values) {
  NpyArray a;
  a.dtype = t;
  a.shape = std::move(shape);
  a.data.resize(values.size() * sizeof(T));
  std::uint8_t* p = a.data.data();
  for (const T& v : values) {
    std::uint64_t bits = 0;
    if constexpr (sizeof(T) == 8)
      bits = std::bit_cast<std::uint64_t>(v);
    else if constexpr (sizeof(T) == 4)
      bits = std::bit_cast<std::uint32_t>(v);
    else
      bits = static_cast<std::uint8_t>(v);
    for (std::size_t i = 0; i < sizeof(T); ++i) *p++ = static_cast<std::uint8_t>(bits >> (8 * i));
  }
  return a;
}

template <typename Out>
std::vector<Out> convert(const NpyArray& a) {
  const std::size_t item = npy_item_size(a.dtype);
  const std::size_t n = a.data.size() / item;
  std::vector<Out> out(n);
  const std::uint8_t* p = a.data.data();
  for (std::size_t i = 0; i < n; ++i, p += item) {
    switch (a.dtype) {
      case NpyDType::kF4:
        out[i] = static_cast<Out>(core::load_f32_le(p));
        break;
      case NpyDType::kF8:
        out[i] = static_cast<Out>(std::bit_cast<double>(core::load_le<std::uint64_t>(p)));
        break;
      case NpyDType::kI4:
        out[i] = static_cast<Out>(static_cast<std::int32_t>(core::load_le<std::uint32_t>(p)));
        break;
      case NpyDType::kI8:
        out[i] = static_cast<Out>(static_cast<std::int64_t>(core::load_le<std::uint64_t>(p)));
        break;
      case NpyDType::kU1:
        out[i] = static_cast<Out>(*p);
        break;
      case NpyDType::kB1:
        out[i] = static_cast<Out>(*p != 0 ? 1 : 0);
        break;
    }
  }
  return out;
}

/// shape product * item size, or nullopt on overflow.
std::optional<std::uint64_t> byte_count(const std::vector<std::uint64_t>& shape, std::size_t item) {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<std::uint64_t>::max() / d) return std::nullopt;
    n *= d;
  }
  if (n > std::numeric_limits<std::uint64_t>::max() / item) return std::nullopt;
  return n * item;
}

void put16(std::vector<std::uint8_t>& b, std::uint16_t v) {
  b.push_back(static_cast<std::uint8_t>(v));
  b.push_back(static_cast<std::uint8_t>(v >> 8));
}
void put32(std::vector<std::uint8_t>& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

}  // namespace

std::size_t npy_item_size(NpyDType t) {
  switch (t) {
    case NpyDType::kF4:
    case NpyDType::kI4:
      return 4;
    case NpyDType::kF8:
    case NpyDType::kI8:
      return 8;
    case NpyDType::kU1:
    case NpyDType::kB1:
      return 1;
  }
  return 1;
}

const char* npy_descr(NpyDType t) {
  switch (t) {
    case NpyDType::kF4:
      return "<f4";
    case NpyDType::kF8:
      return "<f8";
    case NpyDType::kI4:
      return "<i4";
    case NpyDType::kI8:
      return "<i8";
    case NpyDType::kU1:
      return "|u1";
    case NpyDType::kB1:
      return "|b1";
  }
  return "?";
}

std::uint64_t NpyArray::element_count() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) n *= d;
  return n;
}

NpyArray NpyArray::from_f32(std::vector<std::uint64_t> s, std::span<const float> v) {
  return make_array(NpyDType::kF4, std::move(s), v);
}
NpyArray NpyArray::from_f64(std::vector<std::uint64_t> s, std::span<const double> v) {
  return make_array(NpyDType::kF8, std::move(s), v);
}
NpyArray NpyArray::from_i32(std::vector<std::uint64_t> s, std::span<const std::int32_t> v) {
  return make_array(NpyDType::kI4, std::move(s), v);
}
NpyArray NpyArray::from_i64(std::vector<std::uint64_t> s, std::span<const std::int64_t> v) {
  return make_array(NpyDType::kI8, std::move(s), v);
}
NpyArray NpyArray::from_u8(std::vector<std::uint64_t> s, std::span<const std::uint8_t> v) {
  return make_array(NpyDType::kU1, std::move(s), v);
}
NpyArray NpyArray::from_bool(std::vector<std::uint64_t> s, std::span<const bool> v) {
  NpyArray a;
  a.dtype = NpyDType::kB1;
  a.shape = std::move(s);
  a.data.reserve(v.size());
  for (bool b : v) a.data.push_back(b ? 1 : 0);
  return a;
}

std::vector<float> NpyArray::to_f32() const {
  return convert<float>(*this);
}
std::vector<double> NpyArray::to_f64() const {
  return convert<double>(*this);
}
std::vector<std::int64_t> NpyArray::to_i64() const {
  return convert<std::int64_t>(*this);
}

core::Result<NpyArray> read_npy(core::Bytes file, const NpyLimits& limits) {
  if (file.size() < kNpyMagic.size() ||
      core::as_chars(file.subspan(0, kNpyMagic.size())) != kNpyMagic)
    return core::error_at_offset(codes::NPY_MAGIC, "not a .npy file (no \\x93NUMPY magic)", 0);
  if (file.size() < 8)
    return core::error_at_offset(codes::NPY_TRUNCATED, "file ends inside the version", file.size());
  const std::uint8_t major = file[6];
  const std::uint8_t minor = file[7];
  if ((major != 1 && major != 2) || minor != 0)
    return core::error_at_offset(codes::NPY_VERSION,
                                 "format version " + std::to_string(major) + "." +
                                     std::to_string(minor) + " is not supported (1.0 and 2.0 are)",
                                 6);
  const std::size_t len_size = major == 1 ? 2 : 4;
  if (file.size() < 8 + len_size)
    return core::error_at_offset(codes::NPY_TRUNCATED, "file ends inside the header length",
                                 file.size());
  const std::uint32_t header_len = major == 1 ? core::load_le<std::uint16_t>(file.data() + 8)
                                              : core::load_le<std::uint32_t>(file.data() + 8);
  const std::size_t header_start = 8 + len_size;
  if (header_len > limits.max_header_bytes)
    return core::error_at_offset(codes::NPY_LIMIT,
                                 "header of " + std::to_string(header_len) +
                                     " bytes exceeds the limit of " +
                                     std::to_string(limits.max_header_bytes),
                                 8);
  if (file.size() - header_start < header_len)
    return core::error_at_offset(codes::NPY_TRUNCATED, "file ends inside the header", file.size());
  std::string_view header = core::as_chars(file.subspan(header_start, header_len));
  if (header.empty() || header.back() != '\n')
    return core::error_at_offset(codes::NPY_HEADER, "header must end with a newline",
                                 header_start + header_len);
  header.remove_suffix(1);
  auto parsed = HeaderParser(header, header_start).parse(limits.max_dims);
  if (!parsed) return std::move(parsed).error();
  const auto dtype = dtype_from_descr(parsed->descr);
  if (!dtype)
    return core::error_at_offset(
        codes::NPY_DTYPE,
        "dtype '" + parsed->descr +
            "' is not supported (little-endian <f4 <f8 <i4 <i8, |u1, |b1 are)",
        header_start);
  if (parsed->fortran)
    return core::error_at_offset(codes::NPY_FORTRAN_ORDER,
                                 "Fortran-order arrays are not supported (C order only)",
                                 header_start);
  const std::size_t data_start = header_start + header_len;
  const auto bytes = byte_count(parsed->shape, npy_item_size(*dtype));
  if (!bytes)
    return core::error_at_offset(codes::NPY_SHAPE, "shape product overflows", header_start);
  if (*bytes > limits.max_data_bytes)
    return core::error_at_offset(codes::NPY_LIMIT,
                                 "array of " + std::to_string(*bytes) +
                                     " bytes exceeds the limit of " +
                                     std::to_string(limits.max_data_bytes),
                                 header_start);
  if (file.size() - data_start != *bytes)
    return core::error_at_offset(codes::NPY_SIZE,
                                 "shape needs " + std::to_string(*bytes) +
                                     " data bytes, the file holds " +
                                     std::to_string(file.size() - data_start),
                                 data_start);
  NpyArray a;
  a.dtype = *dtype;
  a.shape = std::move(parsed->shape);
  auto data = file.subspan(data_start);
  a.data.assign(data.begin(), data.end());
  return a;
}

core::Result<std::vector<std::uint8_t>> write_npy(const NpyArray& array) {
  const auto bytes = byte_count(array.shape, npy_item_size(array.dtype));
  if (!bytes || *bytes != array.data.size())
    return make_error(codes::NPY_SIZE, "array data holds " + std::to_string(array.data.size()) +
                                           " bytes; the shape needs a different count");
  std::string dict = "{'descr': '";
  dict += npy_descr(array.dtype);
  dict += "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < array.shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(array.shape[i]);
  }
  if (array.shape.size() == 1) dict += ",";
  dict += "), }";
  // Pad with spaces so that magic + version + length + header is a multiple of 64.
  std::size_t prefix = 10;
  std::size_t total = prefix + dict.size() + 1;
  if ((total + 63) / 64 * 64 - prefix > 0xFFFF) prefix = 12;
  total = prefix + dict.size() + 1;
  const std::size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  std::vector<std::uint8_t> out;
  out.reserve(padded + array.data.size());
  out.insert(out.end(), kNpyMagic.begin(), kNpyMagic.end());
  out.push_back(prefix == 10 ? 1 : 2);
  out.push_back(0);
  if (prefix == 10)
    put16(out, static_cast<std::uint16_t>(dict.size()));
  else
    put32(out, static_cast<std::uint32_t>(dict.size()));
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

core::Result<std::vector<std::uint8_t>> write_npz(std::span<const NpzMember> members) {
  if (members.size() >= 0xFFFF)
    return make_error(codes::NPZ_TOO_LARGE, "too many members for a ZIP without ZIP64");
  std::set<std::string> seen;
  struct Entry {
    std::string name;
    std::uint32_t crc, size, offset;
  };
  std::vector<Entry> entries;
  std::vector<std::uint8_t> out;
  constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
  constexpr std::uint64_t kMax = 0xFFFFFFFFULL;
  for (const NpzMember& m : members) {
    if (m.name.empty() || m.name.find_first_of(std::string_view("/\\\0", 3)) != std::string::npos ||
        !seen.insert(m.name).second)
      return make_error(codes::NPZ_NAME,
                        "member name '" + m.name + "' is empty, repeated or has / \\ NUL");
    auto npy = write_npy(m.array);
    if (!npy) return std::move(npy).error();
    const std::string name = m.name + ".npy";
    if (npy->size() >= kMax || out.size() + npy->size() + 30 + name.size() >= kMax ||
        name.size() > 0xFFFF)
      return make_error(codes::NPZ_TOO_LARGE,
                        "member '" + m.name + "' exceeds the 4 GiB ZIP limit");
    const auto crc = static_cast<std::uint32_t>(crc32_z(0L, npy->data(), npy->size()));
    Entry e{name, crc, static_cast<std::uint32_t>(npy->size()),
            static_cast<std::uint32_t>(out.size())};
    put32(out, 0x04034b50);
    put16(out, 20);  // version needed: 2.0
    put16(out, 0);   // flags
    put16(out, 0);   // method: STORED
    put16(out, 0);   // time 00:00:00
    put16(out, kDosDate);
    put32(out, e.crc);
    put32(out, e.size);
    put32(out, e.size);
    put16(out, static_cast<std::uint16_t>(name.size()));
    put16(out, 0);  // extra length
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), npy->begin(), npy->end());
    entries.push_back(std::move(e));
  }
  const std::size_t cd_start = out.size();
  for (const Entry& e : entries) {
    put32(out, 0x02014b50);
    put16(out, 20);  // made by: MS-DOS, 2.0
    put16(out, 20);
    put16(out, 0);
    put16(out, 0);
    put16(out, 0);
    put16(out, kDosDate);
    put32(out, e.crc);
    put32(out, e.size);
    put32(out, e.size);
    put16(out, static_cast<std::uint16_t>(e.name.size()));
    put16(out, 0);  // extra
    put16(out, 0);  // comment
    put16(out, 0);  // disk
    put16(out, 0);  // internal attributes
    put32(out, 0);  // external attributes
    put32(out, e.offset);
    out.insert(out.end(), e.name.begin(), e.name.end());
  }
  const std::size_t cd_size = out.size() - cd_start;
  if (out.size() >= kMax)
    return make_error(codes::NPZ_TOO_LARGE, "archive exceeds the 4 GiB ZIP limit");
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<std::uint16_t>(entries.size()));
  put16(out, static_cast<std::uint16_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(cd_size));
  put32(out, static_cast<std::uint32_t>(cd_start));
  put16(out, 0);  // comment length
  return out;
}

core::Result<std::vector<NpzMember>> read_npz(core::Bytes file, const NpyLimits& limits) {
  zip_error_t zerr;
  zip_error_init(&zerr);
  zip_source_t* src = zip_source_buffer_create(file.data(), file.size(), 0, &zerr);
  if (src == nullptr) {
    zip_error_fini(&zerr);
    return make_error(codes::NPZ_ZIP, "cannot open the archive buffer");
  }
  zip_t* za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
  if (za == nullptr) {
    std::string msg = zip_error_strerror(&zerr);
    zip_source_free(src);
    zip_error_fini(&zerr);
    return make_error(codes::NPZ_ZIP, "not a readable ZIP archive: " + msg);
  }
  zip_error_fini(&zerr);
  struct Closer {
    zip_t* z;
    ~Closer() { zip_discard(z); }
  } closer{za};

  const zip_int64_t count = zip_get_num_entries(za, 0);
  if (count < 0 || static_cast<std::uint64_t>(count) > limits.max_members)
    return make_error(codes::NPZ_LIMIT, "archive has " + std::to_string(count) +
                                            " members; limit " +
                                            std::to_string(limits.max_members));
  std::vector<NpzMember> members;
  std::set<std::string> seen;
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za, index, 0, &st) != 0 || (st.valid & ZIP_STAT_NAME) == 0 ||
        (st.valid & ZIP_STAT_SIZE) == 0)
      return make_error(codes::NPZ_ZIP, "cannot read member " + std::to_string(i));
    std::string_view full(st.name);
    if (full.size() < 5 || full.substr(full.size() - 4) != ".npy")
      return make_error(codes::NPZ_NAME, "member '" + std::string(full) + "' is not NAME.npy");
    std::string name(full.substr(0, full.size() - 4));
    if (!seen.insert(name).second)
      return make_error(codes::NPZ_NAME, "member '" + std::string(full) + "' is repeated");
    // The largest acceptable member: header + data limit.
    const std::uint64_t max_member =
        limits.max_data_bytes + static_cast<std::uint64_t>(limits.max_header_bytes) + 12;
    if (st.size > max_member)
      return make_error(codes::NPZ_LIMIT, "member '" + std::string(full) + "' of " +
                                              std::to_string(st.size) + " bytes exceeds the limit");
    zip_file_t* zf = zip_fopen_index(za, index, 0);
    if (zf == nullptr)
      return make_error(codes::NPZ_ZIP,
                        "cannot open member '" + std::string(full) + "': " + zip_strerror(za));
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.size));
    std::uint64_t got = 0;
    bool failed = false;
    while (got < st.size) {
      const zip_int64_t n = zip_fread(zf, bytes.data() + got, st.size - got);
      if (n <= 0) {
        failed = true;
        break;
      }
      got += static_cast<std::uint64_t>(n);
    }
    if (!failed) {  // the stream must end exactly here (CRC checked by libzip at EOF)
      std::uint8_t extra = 0;
      if (zip_fread(zf, &extra, 1) != 0) failed = true;
    }
    zip_fclose(zf);
    if (failed)
      return make_error(codes::NPZ_ZIP, "member '" + std::string(full) +
                                            "' could not be read completely (corrupt data or CRC)");
    auto arr = read_npy(bytes, limits);
    if (!arr) {
      core::Error e = std::move(arr).error();
      e.location.member = std::string(full);
      return e;
    }
    members.push_back(NpzMember{std::move(name), std::move(arr).value()});
  }
  return members;
}

core::Status write_file_bytes(const std::filesystem::path& path,
                              std::span<const std::uint8_t> bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return make_error(core::codes::IO_OPEN, "cannot open " + path.string() + " for writing");
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) return make_error(core::codes::IO_WRITE, "cannot write " + path.string());
  return core::Ok{};
}

core::Result<std::filesystem::path> companion_path(const std::filesystem::path& path,
                                                   const char* extension, bool writing) {
  std::filesystem::path other = path;
  other.replace_extension(extension);
  if (other != path) return other;
  return make_error(writing ? core::codes::IO_WRITE : core::codes::IO_OPEN,
                    path.string() + " and its " + extension +
                        " companion would be one file: give a name that does not end in " +
                        extension);
}

core::Result<std::vector<std::uint8_t>> read_file_bytes(const std::filesystem::path& path,
                                                        std::uint64_t max_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return make_error(core::codes::IO_OPEN, "cannot read " + path.string() + ": " + ec.message());
  if (size > max_bytes)
    return make_error(core::codes::IO_READ,
                      path.string() + " is larger than " + std::to_string(max_bytes) + " bytes");
  std::ifstream f(path, std::ios::binary);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  if (!f || !f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    return make_error(core::codes::IO_READ, "cannot read " + path.string());
  return bytes;
}

}  // namespace charkit::deformer
