// GltfDocument (gltf_document.h): GLB container, strict JSON, buffers and
// typed accessor reading, every range checked before anything is allocated.
#include "charkit/scene/gltf_document.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <type_traits>
#include <utility>

#include "charkit/core/base64.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/scene/error_codes.h"

namespace charkit::scene {

using core::Bytes;
using core::Error;
using core::Json;
using core::Location;
using core::Result;

namespace {

using gltf::kChunkBin;
using gltf::kChunkJson;
using gltf::kGlbMagic;

// Components per element and rows per matrix column (0 for non-matrices).
bool type_shape(std::string_view type, std::size_t& components, std::size_t& rows) {
  rows = 0;
  if (type == "SCALAR")
    components = 1;
  else if (type == "VEC2")
    components = 2;
  else if (type == "VEC3")
    components = 3;
  else if (type == "VEC4")
    components = 4;
  else if (type == "MAT2")
    components = 4, rows = 2;
  else if (type == "MAT3")
    components = 9, rows = 3;
  else if (type == "MAT4")
    components = 16, rows = 4;
  else
    return false;
  return true;
}

// Byte offset of component c inside an element: matrix columns start on
// 4-byte boundaries (glTF 2.0 §3.6.2.4).
struct Layout {
  std::size_t components = 1;
  std::size_t rows = 0;  // matrices only
  std::size_t csize = 4;
  std::size_t column_stride = 0;
  std::size_t element_size = 4;

  Layout(std::size_t comps, std::size_t r, std::size_t cs) : components(comps), rows(r), csize(cs) {
    if (rows == 0) {
      element_size = components * csize;
    } else {
      column_stride = (rows * csize + 3) / 4 * 4;
      element_size = (components / rows) * column_stride;
    }
  }
  std::size_t offset(std::size_t c) const {
    return rows == 0 ? c * csize : (c / rows) * column_stride + (c % rows) * csize;
  }
};

// An optional unsigned integer member (def when absent).
Result<std::uint64_t> uint_member(const Json& obj, const char* key,
                                  std::optional<std::uint64_t> def, const std::string& ptr,
                                  core::ErrorCode code) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (def) return *def;
    return core::error_at_pointer(code, std::string(key) + " is missing", ptr + "/" + key);
  }
  const auto v = core::json_uint32(*it);
  if (!v)
    return core::error_at_pointer(code, std::string(key) + " must be an unsigned integer",
                                  ptr + "/" + key);
  return std::uint64_t{*v};
}

// obj[key] as an index below n.
Result<std::size_t> index_member(const Json& obj, const char* key, std::size_t n,
                                 const std::string& ptr, core::ErrorCode code, const char* what) {
  auto v = uint_member(obj, key, std::nullopt, ptr, code);
  if (!v) return std::move(v).error();
  if (*v >= n)
    return core::error_at_pointer(code,
                                  std::string(key) + " " + std::to_string(*v) +
                                      " is not one of the " + std::to_string(n) + " " + what,
                                  ptr + "/" + key);
  return static_cast<std::size_t>(*v);
}

// The value of one component at p as T (normalized per glTF 2.0 §3.11).
template <typename T>
T component_value(const std::uint8_t* p, GltfComponent c, bool normalized) {
  switch (c) {
    case GltfComponent::kFloat:
      return static_cast<T>(core::load_f32_le(p));
    case GltfComponent::kByte: {
      const auto v = static_cast<std::int8_t>(p[0]);
      if (normalized) return std::max(static_cast<T>(v) / T(127), T(-1));
      return static_cast<T>(v);
    }
    case GltfComponent::kUnsignedByte:
      return normalized ? static_cast<T>(p[0]) / T(255) : static_cast<T>(p[0]);
    case GltfComponent::kShort: {
      const auto v = static_cast<std::int16_t>(core::load_le<std::uint16_t>(p));
      if (normalized) return std::max(static_cast<T>(v) / T(32767), T(-1));
      return static_cast<T>(v);
    }
    case GltfComponent::kUnsignedShort: {
      const auto v = core::load_le<std::uint16_t>(p);
      return normalized ? static_cast<T>(v) / T(65535) : static_cast<T>(v);
    }
    case GltfComponent::kUnsignedInt:
      return static_cast<T>(core::load_le<std::uint32_t>(p));
  }
  return T(0);
}

}  // namespace

// ---------------------------------------------------------------------------
// Container and URIs

bool is_glb(Bytes b) {
  return b.size() >= 4 && core::load_le<std::uint32_t>(b.data()) == kGlbMagic;
}

Result<GlbChunks> split_glb(Bytes b) {
  GlbChunks out;
  if (b.size() < 12)
    return core::error_at_offset(codes::GLB_TRUNCATED, "the GLB header needs 12 bytes", b.size());
  if (!is_glb(b))
    return core::error_at_offset(codes::GLB_MAGIC, "not a GLB: the file does not start with glTF",
                                 0);
  const std::uint32_t version = core::load_le<std::uint32_t>(b.data() + 4);
  const std::uint32_t length = core::load_le<std::uint32_t>(b.data() + 8);
  if (version != 2)
    return core::error_at_offset(codes::GLB_VERSION,
                                 "GLB version " + std::to_string(version) + " (need 2)", 4);
  if (length > b.size())
    return core::error_at_offset(codes::GLB_TRUNCATED,
                                 "the header declares " + std::to_string(length) +
                                     " bytes, the file has " + std::to_string(b.size()),
                                 8);
  if (length < 20)
    return core::error_at_offset(codes::GLB_LENGTH,
                                 "declared length " + std::to_string(length) + " < 20", 8);
  if (length < b.size())
    out.warnings.push_back(
        {codes::GLB_TRAILING_BYTES,
         std::to_string(b.size() - length) + " bytes after the declared GLB length are ignored"});
  const Bytes glb = b.first(length);
  const std::uint32_t json_len = core::load_le<std::uint32_t>(glb.data() + 12);
  const std::uint32_t json_type = core::load_le<std::uint32_t>(glb.data() + 16);
  if (json_type != kChunkJson)
    return core::error_at_offset(codes::GLB_CHUNK_TYPE, "the first chunk must be JSON", 16);
  if (json_len > length - 20)
    return core::error_at_offset(codes::GLB_CHUNK_LENGTH,
                                 "JSON chunk length " + std::to_string(json_len) +
                                     " runs past the end (" + std::to_string(length - 20) +
                                     " bytes left)",
                                 12);
  if (json_len % 4 != 0)
    out.warnings.push_back({codes::GLB_ALIGNMENT, "the JSON chunk length is not a multiple of 4"});
  Bytes text = glb.subspan(20, json_len);
  // Padding is spaces (§4.4.3.2); some writers pad with NUL bytes.
  std::size_t end = text.size();
  while (end > 0 && text[end - 1] == 0) --end;
  if (end != text.size())
    out.warnings.push_back(
        {codes::GLB_JSON_NUL_PADDING, "the JSON chunk is padded with NUL bytes"});
  out.json = text.first(end);
  std::size_t at = 20 + std::size_t{json_len};
  bool first = true;
  while (at < length) {
    if (length - at < 8)
      return core::error_at_offset(codes::GLB_TRUNCATED, "a chunk header needs 8 bytes", at);
    const std::uint32_t len = core::load_le<std::uint32_t>(glb.data() + at);
    const std::uint32_t type = core::load_le<std::uint32_t>(glb.data() + at + 4);
    if (len > length - at - 8)
      return core::error_at_offset(codes::GLB_CHUNK_LENGTH,
                                   "chunk length " + std::to_string(len) + " runs past the end (" +
                                       std::to_string(length - at - 8) + " bytes left)",
                                   at);
    if (type == kChunkBin) {
      if (!first)
        return core::error_at_offset(codes::GLB_CHUNK_TYPE,
                                     "the BIN chunk must directly follow the JSON chunk", at + 4);
      out.bin = glb.subspan(at + 8, len);
    } else if (type == kChunkJson) {
      return core::error_at_offset(codes::GLB_CHUNK_TYPE, "a second JSON chunk", at + 4);
    } else {
      out.warnings.push_back({codes::GLB_UNKNOWN_CHUNK,
                              "chunk at byte " + std::to_string(at) + " of unknown type skipped"});
    }
    first = false;
    at += 8 + std::size_t{len};
  }
  return out;
}

Result<std::string> resolve_gltf_uri(const std::string& base, const std::string& uri,
                                     const std::string& ptr) {
  std::string path;
  for (std::size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size() &&
        std::isxdigit(static_cast<unsigned char>(uri[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(uri[i + 2]))) {
      path += static_cast<char>(std::stoi(uri.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      path += uri[i];
    }
  }
  if (path.empty()) return core::error_at_pointer(codes::GLTF_URI_UNSAFE, "empty uri", ptr);
  if (path.find('\0') != std::string::npos)
    return core::error_at_pointer(codes::GLTF_URI_UNSAFE, "uri holds a NUL byte", ptr);
  if (path[0] == '/' || path[0] == '\\')
    return core::error_at_pointer(codes::GLTF_URI_UNSAFE,
                                  "absolute path " + uri + " is not allowed", ptr);
  const auto colon = path.find(':');
  const auto slash = path.find('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon < slash))
    return core::error_at_pointer(
        codes::GLTF_URI_UNSAFE,
        "uri " + uri + " has a scheme or drive; only relative file paths are read", ptr);
  std::string out = base;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t stop = path.find_first_of("/\\", start);
    if (stop == std::string::npos) stop = path.size();
    const std::string seg = path.substr(start, stop - start);
    if (seg == "..")
      return core::error_at_pointer(codes::GLTF_URI_UNSAFE,
                                    "uri " + uri + " leaves its folder (..)", ptr);
    if (!seg.empty() && seg != ".") {
      if (!out.empty()) out += '/';
      out += seg;
    }
    start = stop + 1;
  }
  return out;
}

// ---------------------------------------------------------------------------
// The document

struct GltfDocument::Impl {
  Json root;
  GltfAsset asset;
  bool glb = false;
  std::vector<std::uint8_t> bin;
  bool has_bin = false;
  GltfLoadOptions options;
  std::vector<GltfWarning> warnings;
  std::map<std::size_t, std::vector<std::uint8_t>> buffers;  // loaded, cut to byteLength
  std::uint64_t used = 0;                                    // bytes counted against the cap

  core::Status charge(std::uint64_t n, const std::string& ptr) {
    if (n > options.max_total_bytes || used > options.max_total_bytes - n)
      return core::error_at_pointer(codes::GLTF_LIMIT,
                                    "loading " + std::to_string(n) +
                                        " more bytes would pass the limit of " +
                                        std::to_string(options.max_total_bytes),
                                    ptr);
    used += n;
    return core::Ok{};
  }
  template <typename T>
  Result<std::vector<T>> read(GltfDocument& doc, std::size_t index);
};

GltfDocument::GltfDocument(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GltfDocument::GltfDocument(GltfDocument&&) noexcept = default;
GltfDocument& GltfDocument::operator=(GltfDocument&&) noexcept = default;
GltfDocument::~GltfDocument() = default;

bool GltfDocument::glb() const {
  return impl_->glb;
}
const Json& GltfDocument::json() const {
  return impl_->root;
}
Json& GltfDocument::mutable_json() {
  return impl_->root;
}
const std::vector<GltfWarning>& GltfDocument::warnings() const {
  return impl_->warnings;
}
const GltfAsset& GltfDocument::asset() const {
  return impl_->asset;
}

Result<GltfDocument> GltfDocument::load(Bytes bytes, const GltfLoadOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  Bytes text = bytes;
  std::uint64_t text_offset = 0;
  if (is_glb(bytes)) {
    auto chunks = split_glb(bytes);
    if (!chunks) return std::move(chunks).error();
    impl->glb = true;
    impl->warnings = std::move(chunks->warnings);
    text = chunks->json;
    text_offset = 20;
    if (chunks->bin) {
      if (auto st = impl->charge(chunks->bin->size(), ""); !st) return std::move(st).error();
      impl->bin.assign(chunks->bin->begin(), chunks->bin->end());
      impl->has_bin = true;
    }
  }
  if (text.size() > options.max_total_bytes)
    return core::error_at_offset(codes::GLTF_LIMIT,
                                 "glTF JSON of " + std::to_string(text.size()) +
                                     " bytes is over the limit of " +
                                     std::to_string(options.max_total_bytes),
                                 text_offset);
  if (auto st = impl->charge(text.size(), ""); !st) return std::move(st).error();
  core::JsonLimits limits;
  limits.max_depth = options.max_json_depth;
  auto json = parse_gltf_json(core::as_chars(text), text_offset, limits);
  if (!json) return std::move(json).error();
  auto asset = read_gltf_asset(*json);
  if (!asset) return std::move(asset).error();
  impl->root = std::move(*json);
  impl->asset = std::move(*asset);
  return GltfDocument(std::move(impl));
}

Result<GltfDocument> GltfDocument::load_file(const std::string& path, GltfLoadOptions options) {
  auto file = core::MappedFile::open(path);
  if (!file) return std::move(file).error();
  if (options.base_dir.empty()) {
    const auto slash = path.find_last_of('/');
    options.base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
    if (options.base_dir.empty()) options.base_dir = "/";
  }
  return load(file->bytes(), options);
}

Result<Bytes> GltfDocument::buffer(std::size_t index) {
  Impl& m = *impl_;
  if (auto it = m.buffers.find(index); it != m.buffers.end()) return Bytes(it->second);
  const std::string ptr = core::json_pointer_join("/buffers", index);
  if (index >= m.asset.buffers.size())
    return core::error_at_pointer(codes::GLTF_BUFFER, "no such buffer", ptr);
  const GltfBuffer& buf = m.asset.buffers[index];
  const std::uint64_t len = buf.byte_length;
  const auto short_of = [&](std::uint64_t have, const std::string& what) {
    return core::error_at_pointer(codes::GLTF_BUFFER,
                                  "byteLength " + std::to_string(len) + " but " + what +
                                      " holds only " + std::to_string(have) + " bytes",
                                  ptr + "/byteLength");
  };
  std::vector<std::uint8_t> data;
  if (!buf.uri) {
    // glTF 2.0 §4.4.3.3: buffer 0 without a uri is the GLB-stored BIN chunk.
    if (!m.glb || index != 0)
      return core::error_at_pointer(codes::GLTF_BUFFER,
                                    "a buffer without a uri must be buffer 0 of a GLB", ptr);
    if (!m.has_bin)
      return core::error_at_pointer(codes::GLTF_BUFFER,
                                    "buffer 0 refers to the BIN chunk, but the GLB has none", ptr);
    if (m.bin.size() < len) return short_of(m.bin.size(), "the BIN chunk");
    // The BIN chunk is charged already.
    data.assign(m.bin.begin(), m.bin.begin() + static_cast<std::ptrdiff_t>(len));
    return Bytes(m.buffers.emplace(index, std::move(data)).first->second);
  }
  const std::string& u = *buf.uri;
  std::string scheme = u.substr(0, 5);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme == "data:") {
    const std::size_t comma = u.find(',');
    const std::string_view head = std::string_view(u).substr(0, comma);
    if (comma == std::string::npos || head.size() < 7 || head.substr(head.size() - 7) != ";base64")
      return core::error_at_pointer(codes::GLTF_URI, "a data: URI must be base64 (data:…;base64,…)",
                                    ptr + "/uri");
    const std::string_view payload = std::string_view(u).substr(comma + 1);
    const std::size_t have = core::base64_decoded_size(payload);
    if (have < len) return short_of(have, "the data: URI");
    if (auto st = m.charge(have, ptr + "/uri"); !st) return std::move(st).error();
    auto decoded = core::base64_decode(payload);
    if (!decoded) {
      Error e = std::move(decoded).error();
      const std::uint64_t at = e.location.offset.value_or(0) + comma + 1;
      e.message += " (character " + std::to_string(at) + " of the uri)";
      e.location = Location::at_pointer(ptr + "/uri");
      return e;
    }
    data = std::move(*decoded);
  } else {
    if (m.options.base_dir.empty())
      return core::error_at_pointer(
          codes::GLTF_URI_EXTERNAL,
          "buffer refers to the file \"" + u +
              "\", but the document was loaded from bytes without a folder; "
              "embed the buffer (GLB or data: URI) or load the file from disk",
          ptr + "/uri");
    auto rel = resolve_gltf_uri("", u, ptr + "/uri");
    if (!rel) return std::move(rel).error();
    const std::string path = m.options.base_dir + "/" + *rel;
    auto file = core::MappedFile::open(path);
    if (!file) {
      Error e = std::move(file).error();
      e.location = Location::at_pointer(ptr + "/uri");
      return e;
    }
    const Bytes fb = file->bytes();
    if (fb.size() < len) return short_of(fb.size(), "the file " + *rel);
    if (auto st = m.charge(len, ptr + "/uri"); !st) return std::move(st).error();
    data.assign(fb.begin(), fb.begin() + static_cast<std::ptrdiff_t>(len));
  }
  data.resize(static_cast<std::size_t>(len));
  return Bytes(m.buffers.emplace(index, std::move(data)).first->second);
}

Result<GltfAccessorInfo> GltfDocument::accessor(std::size_t index) const {
  const auto& accessors = impl_->asset.accessors;
  if (index >= accessors.size())
    return core::error_at_pointer(codes::GLTF_ACCESSOR,
                                  "no accessor " + std::to_string(index) + " (the file has " +
                                      std::to_string(accessors.size()) + ")",
                                  core::json_pointer_join("/accessors", index));
  return accessors[index];
}

namespace {

// A bufferView's bytes and stride.
struct View {
  Bytes bytes;
  std::size_t stride = 0;  // 0 = not given
};

}  // namespace

template <typename T>
Result<std::vector<T>> GltfDocument::Impl::read(GltfDocument& doc, std::size_t index) {
  const std::string ptr = core::json_pointer_join("/accessors", index);
  auto info = doc.accessor(index);
  if (!info) return std::move(info).error();
  if constexpr (std::is_same_v<T, std::uint32_t>) {
    if (info->normalized || (info->component_type != GltfComponent::kUnsignedByte &&
                             info->component_type != GltfComponent::kUnsignedShort &&
                             info->component_type != GltfComponent::kUnsignedInt))
      return core::error_at_pointer(
          codes::GLTF_ACCESSOR,
          "an unsigned integer accessor that is not normalized is needed here",
          ptr + "/componentType");
  }
  std::size_t comps = 0, rows = 0;
  type_shape(info->type, comps, rows);
  const Layout layout(comps, rows, gltf_component_size(info->component_type));
  const std::uint64_t values = info->count * comps;

  // A bufferView, range-checked against its buffer.
  const auto view_of = [&](std::size_t v) -> Result<View> {
    auto bytes = doc.buffer_view(v);
    if (!bytes) return std::move(bytes).error();
    const std::string vp = core::json_pointer_join("/bufferViews", v);
    return View{*bytes, static_cast<std::size_t>(asset.buffer_views[v].byte_stride)};
  };
  // count elements of elem bytes every stride bytes from offset fit in the view.
  const auto fits = [](std::uint64_t offset, std::uint64_t n, std::uint64_t stride,
                       std::uint64_t elem, std::uint64_t length) {
    if (n == 0) return offset <= length;
    return offset <= length && elem <= length - offset &&
           (n - 1) <= (length - offset - elem) / stride;
  };

  // The decoded array is bounded by max_total_bytes before it is allocated.
  const auto over_limit = [&] {
    return core::error_at_pointer(codes::GLTF_LIMIT,
                                  "accessor of " + std::to_string(info->count) +
                                      " elements is over the limit of " +
                                      std::to_string(options.max_total_bytes) + " bytes",
                                  ptr + "/count");
  };

  std::vector<T> out;
  const Json& a = root["accessors"][index];  // sparse, read by this layer only
  if (info->buffer_view) {
    auto view = view_of(*info->buffer_view);
    if (!view) return std::move(view).error();
    const std::size_t stride = view->stride != 0 ? view->stride : layout.element_size;
    if (stride < layout.element_size)
      return core::error_at_pointer(
          codes::GLTF_BUFFER_VIEW,
          "byteStride " + std::to_string(stride) + " is below the element size " +
              std::to_string(layout.element_size),
          core::json_pointer_join("/bufferViews", *info->buffer_view) + "/byteStride");
    const std::uint64_t* off = &info->byte_offset;
    if (!fits(*off, info->count, stride, layout.element_size, view->bytes.size()))
      return core::error_at_pointer(
          codes::GLTF_ACCESSOR,
          std::to_string(info->count) + " elements of " + std::to_string(layout.element_size) +
              " bytes every " + std::to_string(stride) + " from byte " + std::to_string(*off) +
              " run past bufferView " + std::to_string(*info->buffer_view) + " (" +
              std::to_string(view->bytes.size()) + " bytes)",
          ptr);
    // Allocated only now: the check above bounds count by the buffer size.
    if (values * sizeof(T) > options.max_total_bytes) return over_limit();
    out.resize(static_cast<std::size_t>(values));
    const std::uint8_t* base = view->bytes.data() + *off;
    for (std::size_t e = 0; e < info->count; ++e)
      for (std::size_t c = 0; c < comps; ++c)
        out[e * comps + c] = component_value<T>(base + e * stride + layout.offset(c),
                                                info->component_type, info->normalized);
  } else {
    // No bufferView: zeros (glTF 2.0 §3.6.2.1); nothing but the caps bound count.
    if (values * sizeof(T) > options.max_total_bytes) return over_limit();
    if (info->count * layout.element_size > options.max_zero_accessor_bytes)
      return core::error_at_pointer(codes::GLTF_LIMIT,
                                    "accessor without a bufferView declares " +
                                        std::to_string(info->count) +
                                        " elements, over the limit of " +
                                        std::to_string(options.max_zero_accessor_bytes) + " bytes",
                                    ptr + "/count");
    out.assign(static_cast<std::size_t>(values), T(0));
  }

  if (!info->sparse) return out;
  // Sparse substitution (glTF 2.0 §3.6.2.3).
  const std::string sp = ptr + "/sparse";
  const Json& s = a["sparse"];
  if (!s.is_object())
    return core::error_at_pointer(codes::GLTF_SPARSE, "sparse must be an object", sp);
  auto n = uint_member(s, "count", std::nullopt, sp, codes::GLTF_SPARSE);
  if (!n) return std::move(n).error();
  if (*n == 0 || *n > info->count)
    return core::error_at_pointer(codes::GLTF_SPARSE,
                                  "sparse count " + std::to_string(*n) +
                                      " must be 1 to the accessor's count " +
                                      std::to_string(info->count),
                                  sp + "/count");
  const auto part = [&](const char* key) -> Result<const Json*> {
    auto it = s.find(key);
    if (it == s.end() || !it->is_object())
      return core::error_at_pointer(codes::GLTF_SPARSE, std::string(key) + " must be an object",
                                    sp + "/" + key);
    return &*it;
  };
  auto ind = part("indices");
  if (!ind) return std::move(ind).error();
  auto val = part("values");
  if (!val) return std::move(val).error();
  const std::string ip = sp + "/indices", vp = sp + "/values";
  auto ict = uint_member(**ind, "componentType", std::nullopt, ip, codes::GLTF_SPARSE);
  if (!ict) return std::move(ict).error();
  if (*ict != 5121 && *ict != 5123 && *ict != 5125)
    return core::error_at_pointer(codes::GLTF_SPARSE,
                                  "sparse indices must be UNSIGNED_BYTE, _SHORT or _INT",
                                  ip + "/componentType");
  const auto ic = static_cast<GltfComponent>(*ict);
  const std::size_t isize = gltf_component_size(ic);
  auto iv = index_member(**ind, "bufferView", asset.buffer_views.size(), ip, codes::GLTF_SPARSE,
                         "bufferViews");
  if (!iv) return std::move(iv).error();
  auto ioff = uint_member(**ind, "byteOffset", 0, ip, codes::GLTF_SPARSE);
  if (!ioff) return std::move(ioff).error();
  auto vv = index_member(**val, "bufferView", asset.buffer_views.size(), vp, codes::GLTF_SPARSE,
                         "bufferViews");
  if (!vv) return std::move(vv).error();
  auto voff = uint_member(**val, "byteOffset", 0, vp, codes::GLTF_SPARSE);
  if (!voff) return std::move(voff).error();
  auto iview = view_of(*iv);
  if (!iview) return std::move(iview).error();
  auto vview = view_of(*vv);
  if (!vview) return std::move(vview).error();
  if (!fits(*ioff, *n, isize, isize, iview->bytes.size()))
    return core::error_at_pointer(
        codes::GLTF_SPARSE,
        std::to_string(*n) + " indices run past bufferView " + std::to_string(*iv), ip);
  if (!fits(*voff, *n, layout.element_size, layout.element_size, vview->bytes.size()))
    return core::error_at_pointer(
        codes::GLTF_SPARSE,
        std::to_string(*n) + " values run past bufferView " + std::to_string(*vv), vp);
  std::uint64_t previous = 0;
  for (std::size_t k = 0; k < *n; ++k) {
    const std::uint64_t i =
        component_value<std::uint64_t>(iview->bytes.data() + *ioff + k * isize, ic, false);
    if (i >= info->count || (k > 0 && i <= previous))
      return core::error_at_pointer(codes::GLTF_SPARSE,
                                    "index " + std::to_string(k) + " (" + std::to_string(i) +
                                        ") is not increasing or not below the count " +
                                        std::to_string(info->count),
                                    ip);
    previous = i;
    const std::uint8_t* e = vview->bytes.data() + *voff + k * layout.element_size;
    for (std::size_t c = 0; c < comps; ++c)
      out[static_cast<std::size_t>(i) * comps + c] =
          component_value<T>(e + layout.offset(c), info->component_type, info->normalized);
  }
  return out;
}

Result<Bytes> GltfDocument::buffer_view(std::size_t v) {
  const std::string vp = core::json_pointer_join("/bufferViews", v);
  if (v >= impl_->asset.buffer_views.size())
    return core::error_at_pointer(codes::GLTF_BUFFER_VIEW,
                                  "there is no bufferView " + std::to_string(v), vp);
  const GltfBufferView& view = impl_->asset.buffer_views[v];
  auto data = buffer(view.buffer);
  if (!data) return std::move(data).error();
  if (view.byte_offset > data->size() || view.byte_length > data->size() - view.byte_offset)
    return core::error_at_pointer(codes::GLTF_BUFFER_VIEW,
                                  "bytes " + std::to_string(view.byte_offset) + " + " +
                                      std::to_string(view.byte_length) + " run past buffer " +
                                      std::to_string(view.buffer) + " (" +
                                      std::to_string(data->size()) + " bytes)",
                                  vp);
  return data->subspan(static_cast<std::size_t>(view.byte_offset),
                       static_cast<std::size_t>(view.byte_length));
}

Result<std::vector<float>> GltfDocument::read_accessor_floats(std::size_t index) {
  return impl_->read<float>(*this, index);
}
Result<std::vector<double>> GltfDocument::read_accessor_doubles(std::size_t index) {
  return impl_->read<double>(*this, index);
}
Result<std::vector<std::uint32_t>> GltfDocument::read_accessor_uints(std::size_t index) {
  return impl_->read<std::uint32_t>(*this, index);
}

Result<std::vector<float>> read_float_attribute(GltfDocument& doc, std::size_t accessor,
                                                std::size_t components, std::size_t count,
                                                const core::ErrorCode& code,
                                                const std::string& pointer) {
  auto info = doc.accessor(accessor);
  if (!info) return std::move(info).error();
  if (info->components != components || (count != 0 && info->count != count))
    return core::error_at_pointer(code,
                                  "accessor " + std::to_string(accessor) + " is " + info->type +
                                      " × " + std::to_string(info->count) + ", expected " +
                                      std::to_string(components) + " components × " +
                                      std::to_string(count),
                                  pointer);
  return doc.read_accessor_floats(accessor);
}

}  // namespace charkit::scene
