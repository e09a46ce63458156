// Reading `.nmn` files and their embedded models (docs/deformer/nmn.md).
// Every count is checked against the bytes left before anything is
// allocated; alignment is to 4 bytes for uint32 values and to 64 bytes for
// arrays, measured from the start of the file (outer structure) or from the
// start of the blob (embedded model).
#include <array>
#include <cstdio>
#include <string>

#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/nmn.h"

namespace charkit::deformer {
namespace {

using core::Bytes;
using core::Error;
using core::Location;

// A cursor over one region with alignment measured from the region's start.
class Cursor {
 public:
  Cursor(Bytes data, std::uint64_t base) : data_(data), base_(base) {}
  std::uint64_t offset() const { return base_ + pos_; }
  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  bool align(std::size_t a) {
    std::size_t p = (pos_ + a - 1) / a * a;
    if (p > data_.size()) return false;
    pos_ = p;
    return true;
  }
  bool u32(std::uint32_t& v) {
    if (!align(4) || remaining() < 4) return false;
    v = core::load_le<std::uint32_t>(data_.data() + pos_);
    pos_ += 4;
    return true;
  }
  // n floats at a 64-byte boundary; the caller checked n against remaining() for the message.
  bool floats(std::uint64_t n, std::vector<float>& out) {
    if (!align(64) || n > remaining() / 4) return false;
    out.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = core::load_f32_le(data_.data() + pos_ + 4 * i);
    pos_ += 4 * out.size();
    return true;
  }
  bool u16s(std::uint64_t n, std::vector<std::uint16_t>& out) {
    if (!align(64) || n > remaining() / 2) return false;
    out.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = core::load_le<std::uint16_t>(data_.data() + pos_ + 2 * i);
    pos_ += 2 * out.size();
    return true;
  }
  bool bytes(std::size_t n, Bytes& out) {
    if (remaining() < n) return false;
    out = data_.subspan(pos_, n);
    pos_ += n;
    return true;
  }

 private:
  Bytes data_;
  std::size_t pos_ = 0;
  std::uint64_t base_ = 0;
};

std::string what_of(NmnLayerType t) {
  return std::string(nmn_layer_name(static_cast<std::uint32_t>(t)));
}

class ModelReader {
 public:
  ModelReader(Bytes blob, std::uint64_t base) : c_(blob, base) {}

  core::Result<NmnModel> read() {
    std::uint32_t magic = 0, version = 0;
    auto at = c_.offset();
    if (!c_.u32(magic)) return truncated("embedded model magic");
    if (magic != kNmnModelMagic)
      return core::error_at_offset(
          codes::NMN_MODEL_MAGIC, "embedded model magic is " + hex(magic) + ", expected 0x0BA51C01",
          at);
    at = c_.offset();
    if (!c_.u32(version)) return truncated("embedded model version");
    if (version != kNmnModelVersion)
      return core::error_at_offset(
          codes::NMN_MODEL_VERSION,
          "embedded model version " + std::to_string(version) + ", expected 1", at);
    NmnModel m;
    if (auto e = layer(m.root, 0)) return *e;
    m.input_size = m.root.in;
    m.output_size = m.root.out;
    if (!c_.at_end())
      return core::error_at_offset(
          codes::NMN_MODEL_TRAILING,
          std::to_string(c_.remaining()) + " bytes after the root layer of the embedded model",
          c_.offset());
    return m;
  }

 private:
  static std::string hex(std::uint32_t v) {
    std::array<char, 16> buf{};
    std::snprintf(buf.data(), buf.size(), "0x%08X", v);
    return buf.data();
  }
  Error truncated(const std::string& what) const {
    return core::error_at_offset(codes::NMN_TRUNCATED, "file ends inside the " + what, c_.offset());
  }
  std::optional<Error> size_field(std::uint32_t& v, const std::string& what) {
    if (!c_.u32(v)) return truncated(what);
    return std::nullopt;
  }
  // n values of elem bytes each must fit in what is left (checked before allocating).
  std::optional<Error> array_fits(std::uint64_t n, std::uint64_t elem, const std::string& what) {
    auto p = c_.offset();
    if (n > c_.remaining() / elem)
      return core::error_at_offset(codes::NMN_TRUNCATED,
                                   what + " needs " + std::to_string(n) + " values but only " +
                                       std::to_string(c_.remaining()) + " bytes are left",
                                   p);
    return std::nullopt;
  }
  std::optional<Error> floats(std::uint64_t n, std::vector<float>& out, const std::string& what) {
    if (auto e = array_fits(n, 4, what)) return e;
    if (!c_.floats(n, out)) return truncated(what);
    return std::nullopt;
  }

  std::optional<Error> layer(NmnLayer& l, std::size_t depth) {
    auto at = c_.offset();
    if (auto e = layer_fields(l, depth)) return e;
    if (l.in > kNmnMaxWidth || l.out > kNmnMaxWidth)
      return core::error_at_offset(codes::NMN_LAYER_SIZE,
                                   std::string(nmn_layer_name(static_cast<std::uint32_t>(l.type))) +
                                       " layer of " + std::to_string(l.in) + " -> " +
                                       std::to_string(l.out) + " values is wider than " +
                                       std::to_string(kNmnMaxWidth),
                                   at);
    if (l.type != NmnLayerType::kSequence) {
      values_ += std::uint64_t{l.in} + l.out + l.blocks;
      if (values_ > kNmnMaxValues)
        return core::error_at_offset(
            codes::NMN_LAYER_SIZE,
            "the model's layers take and give more than " + std::to_string(kNmnMaxValues) +
                " values in all (the limit is reached at this " +
                std::string(nmn_layer_name(static_cast<std::uint32_t>(l.type))) + " layer)",
            at);
    }
    return std::nullopt;
  }

  std::optional<Error> layer_fields(NmnLayer& l, std::size_t depth) {
    auto at = c_.offset();
    std::uint32_t id = 0;
    if (!c_.u32(id)) return truncated("layer type");
    if (!nmn_layer_supported(id))
      return core::error_at_offset(codes::NMN_LAYER_UNSUPPORTED,
                                   "layer type " + std::to_string(id) + " (" +
                                       std::string(nmn_layer_name(id)) + ") is not supported",
                                   at);
    l.type = static_cast<NmnLayerType>(id);
    const std::string name = what_of(l.type);
    switch (l.type) {
      case NmnLayerType::kSequence: {
        if (depth >= kNmnMaxDepth)
          return core::error_at_offset(
              codes::NMN_TOO_DEEP,
              "Sequence layers nested deeper than " + std::to_string(kNmnMaxDepth), at);
        std::uint32_t n = 0;
        if (auto e = size_field(n, "Sequence count")) return e;
        // Every layer takes at least 8 bytes (type + one uint32).
        if (n > c_.remaining() / 8)
          return core::error_at_offset(codes::NMN_TRUNCATED,
                                       "Sequence of " + std::to_string(n) +
                                           " layers cannot fit in the " +
                                           std::to_string(c_.remaining()) + " bytes left",
                                       at);
        l.children.resize(n);
        for (std::uint32_t i = 0; i < n; ++i) {
          auto child_at = c_.offset();
          if (auto e = layer(l.children[i], depth + 1)) return e;
          if (i > 0 && l.children[i].in != l.children[i - 1].out)
            return core::error_at_offset(codes::NMN_LAYER_SIZE,
                                         "layer " + std::to_string(i) + " of the Sequence takes " +
                                             std::to_string(l.children[i].in) +
                                             " inputs but the layer before gives " +
                                             std::to_string(l.children[i - 1].out),
                                         child_at);
        }
        if (n > 0) {
          l.in = l.children.front().in;
          l.out = l.children.back().out;
        }
        return std::nullopt;
      }
      case NmnLayerType::kLinear: {
        if (auto e = size_field(l.in, "Linear input size")) return e;
        if (auto e = size_field(l.out, "Linear output size")) return e;
        if (auto e = floats(l.out, l.biases, "Linear biases")) return e;
        return floats(std::uint64_t{l.in} * l.out, l.weights, "Linear weights");
      }
      case NmnLayerType::kCompressedLinear: {
        if (auto e = size_field(l.in, "CompressedLinear input size")) return e;
        if (auto e = size_field(l.out, "CompressedLinear output size")) return e;
        if (auto e = floats(l.in, l.offsets, "CompressedLinear offsets")) return e;
        if (auto e = floats(l.in, l.scales, "CompressedLinear scales")) return e;
        if (auto e = floats(l.out, l.biases, "CompressedLinear biases")) return e;
        std::uint64_t n = std::uint64_t{l.in} * l.out;
        if (auto e = array_fits(n, 2, "CompressedLinear weights")) return e;
        if (!c_.u16s(n, l.qweights)) return truncated("CompressedLinear weights");
        return std::nullopt;
      }
      case NmnLayerType::kMultiLinear: {
        if (auto e = size_field(l.blocks, "MultiLinear block count")) return e;
        if (auto e = size_field(l.rows, "MultiLinear rows")) return e;
        if (auto e = size_field(l.cols, "MultiLinear columns")) return e;
        std::uint64_t in = std::uint64_t{l.blocks} * l.rows, out = std::uint64_t{l.blocks} * l.cols;
        if (in > UINT32_MAX || out > UINT32_MAX)
          return core::error_at_offset(codes::NMN_LAYER_SIZE, "MultiLinear sizes exceed 2^32-1",
                                       at);
        l.in = static_cast<std::uint32_t>(in);
        l.out = static_cast<std::uint32_t>(out);
        if (auto e = floats(out, l.biases, "MultiLinear biases")) return e;
        return floats(in * l.cols, l.weights, "MultiLinear weights");
      }
      case NmnLayerType::kRelu:
      case NmnLayerType::kElu:
      case NmnLayerType::kTanh:
      case NmnLayerType::kGelu:
      case NmnLayerType::kCopy: {
        if (auto e = size_field(l.in, name + " size")) return e;
        l.out = l.in;
        return std::nullopt;
      }
      case NmnLayerType::kNormalize:
      case NmnLayerType::kDenormalize:
      case NmnLayerType::kClamp: {
        if (auto e = size_field(l.in, name + " size")) return e;
        l.out = l.in;
        if (auto e =
                floats(l.in, l.a, name + (l.type == NmnLayerType::kClamp ? " minimum" : " mean")))
          return e;
        return floats(l.in, l.b, name + (l.type == NmnLayerType::kClamp ? " maximum" : " std"));
      }
      case NmnLayerType::kPrelu: {
        if (auto e = size_field(l.in, "PReLU size")) return e;
        l.out = l.in;
        return floats(l.in, l.a, "PReLU alpha");
      }
      default:
        break;
    }
    return core::error_at_offset(codes::NMN_LAYER_UNSUPPORTED,
                                 "layer type " + std::to_string(id) + " is not supported", at);
  }

  Cursor c_;
  std::uint64_t values_ = 0;  // the leaf layers' sizes so far (kNmnMaxValues)
};

}  // namespace

std::string_view nmn_layer_name(std::uint32_t id) {
  static constexpr std::array<std::string_view, 23> kNames = {"unknown",
                                                              "Sequence",
                                                              "Normalize",
                                                              "Denormalize",
                                                              "Linear",
                                                              "CompressedLinear",
                                                              "MultiLinear",
                                                              "ReLU",
                                                              "ELU",
                                                              "TanH",
                                                              "PReLU",
                                                              "MemoryCell",
                                                              "Copy",
                                                              "Concat",
                                                              "Array",
                                                              "AggregateSet",
                                                              "AggregateOrExclusive",
                                                              "AggregateOrInclusive",
                                                              "Clamp",
                                                              "SparseMixtureOfExperts",
                                                              "GELU",
                                                              "LayerNorm",
                                                              "LipschiztLinear"};
  return id < kNames.size() ? kNames[id] : kNames[0];
}

bool nmn_layer_supported(std::uint32_t id) {
  switch (static_cast<NmnLayerType>(id)) {
    case NmnLayerType::kSequence:
    case NmnLayerType::kNormalize:
    case NmnLayerType::kDenormalize:
    case NmnLayerType::kLinear:
    case NmnLayerType::kCompressedLinear:
    case NmnLayerType::kMultiLinear:
    case NmnLayerType::kRelu:
    case NmnLayerType::kElu:
    case NmnLayerType::kTanh:
    case NmnLayerType::kPrelu:
    case NmnLayerType::kCopy:
    case NmnLayerType::kClamp:
    case NmnLayerType::kGelu:
      return true;
    default:
      return false;
  }
}

std::uint64_t NmnLayer::parameter_count() const {
  std::uint64_t n = biases.size() + weights.size() + offsets.size() + scales.size() +
                    qweights.size() + a.size() + b.size();
  for (const auto& c : children) n += c.parameter_count();
  return n;
}

std::uint64_t NmnNetwork::input_count() const {
  return std::uint64_t{num_bones} * 6 + std::uint64_t{num_curves} * num_floats_per_curve;
}

std::uint64_t NmnNetwork::output_count() const {
  return std::uint64_t{main.output_size} + (group ? group->output_size : 0);
}

core::Result<NmnModel> read_nmn_model(Bytes blob, std::uint64_t base_offset) {
  return ModelReader(blob, base_offset).read();
}

core::Result<NmnNetwork> read_nmn(Bytes bytes) {
  Cursor c(bytes, 0);
  auto truncated = [&](const std::string& what) {
    return core::error_at_offset(codes::NMN_TRUNCATED, "file ends inside the " + what, c.offset());
  };
  std::array<std::uint32_t, 10> h{};
  static constexpr std::array<const char*, 10> kFields = {
      "magic",    "version",   "mode",      "NumMorphs",        "NumMorphsPerBone",
      "NumBones", "NumCurves", "NumGroups", "NumItemsPerGroup", "NumFloatsPerCurve"};
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (i == 1 && h[0] != kNmnMagic) {
      std::array<char, 16> buf{};
      std::snprintf(buf.data(), buf.size(), "0x%08X", h[0]);
      return core::error_at_offset(
          codes::NMN_MAGIC, std::string("magic is ") + buf.data() + ", expected 0x234A1304", 0);
    }
    if (i == 2 && h[1] != kNmnVersion)
      return core::error_at_offset(codes::NMN_VERSION,
                                   "version " + std::to_string(h[1]) + ", expected 1", 4);
    if (!c.u32(h[i])) return truncated(std::string("header field ") + kFields[i]);
  }
  NmnNetwork n;
  if (h[2] > 1)
    return core::error_at_offset(
        codes::NMN_MODE, "mode " + std::to_string(h[2]) + " (expected 0 local or 1 global)", 8);
  n.mode = static_cast<NmnMode>(h[2]);
  n.num_morphs = h[3];
  n.num_morphs_per_bone = h[4];
  n.num_bones = h[5];
  n.num_curves = h[6];
  n.num_groups = h[7];
  n.num_items_per_group = h[8];
  n.num_floats_per_curve = h[9];
  const std::uint32_t want_fpc = n.mode == NmnMode::kGlobal ? 1 : 6;
  if (n.num_floats_per_curve != want_fpc)
    return core::error_at_offset(codes::NMN_HEADER,
                                 "NumFloatsPerCurve is " + std::to_string(n.num_floats_per_curve) +
                                     ", the " + (n.mode == NmnMode::kGlobal ? "global" : "local") +
                                     " mode needs " + std::to_string(want_fpc),
                                 36);
  const std::uint64_t inputs = n.input_count();
  if (inputs > c.remaining() / 8)
    return core::error_at_offset(codes::NMN_TRUNCATED,
                                 "header announces " + std::to_string(inputs) +
                                     " inputs (mean and std: " + std::to_string(inputs * 8) +
                                     " bytes) but only " + std::to_string(c.remaining()) +
                                     " bytes are left",
                                 20);
  if (!c.floats(inputs, n.input_mean)) return truncated("input mean array");
  if (!c.floats(inputs, n.input_std)) return truncated("input std array");

  // Runtime name: uint32 length counting the NUL, the bytes, the NUL.
  auto name_at = c.offset();
  std::uint32_t name_len = 0;
  if (!c.u32(name_len)) return truncated("runtime name length");
  if (name_len == 0)
    return core::error_at_offset(
        codes::NMN_NAME, "runtime name length is 0; it counts the terminating NUL, so at least 1",
        name_at);
  core::Bytes name;
  if (!c.bytes(name_len, name)) return truncated("runtime name");
  if (name.back() != 0)
    return core::error_at_offset(
        codes::NMN_NAME, "runtime name is not NUL-terminated (its length must count the NUL)",
        c.offset() - 1);
  n.runtime_name.assign(reinterpret_cast<const char*>(name.data()), name.size() - 1);
  if (n.runtime_name.find('\0') != std::string::npos)
    return core::error_at_offset(codes::NMN_NAME, "runtime name holds a NUL before its end",
                                 name_at + 4);

  auto read_blob = [&](const char* what) -> core::Result<NmnModel> {
    auto at = c.offset();
    std::uint32_t size = 0;
    if (!c.u32(size)) return truncated(std::string(what) + " size");
    if (!c.align(64)) return truncated(std::string(what) + " alignment padding");
    core::Bytes blob;
    auto blob_at = c.offset();
    if (!c.bytes(size, blob))
      return core::error_at_offset(codes::NMN_MODEL_SIZE,
                                   std::string(what) + " size " + std::to_string(size) +
                                       " exceeds the " + std::to_string(c.remaining()) +
                                       " bytes left",
                                   at);
    return read_nmn_model(blob, blob_at);
  };
  auto main_at = c.offset();
  auto main = read_blob("main model");
  if (!main) return std::move(main).error();
  n.main = std::move(*main);
  if (n.main.input_size != inputs)
    return core::error_at_offset(codes::NMN_LAYER_SIZE,
                                 "main model takes " + std::to_string(n.main.input_size) +
                                     " inputs but the header gives " + std::to_string(inputs) +
                                     " (NumBones*6 + NumCurves*NumFloatsPerCurve)",
                                 main_at);
  if (n.mode == NmnMode::kLocal && n.num_groups > 0) {
    auto group_at = c.offset();
    auto group = read_blob("group model");
    if (!group) return std::move(group).error();
    std::uint64_t want = std::uint64_t{n.num_groups} * n.num_items_per_group * 6;
    if (group->input_size != want)
      return core::error_at_offset(codes::NMN_LAYER_SIZE,
                                   "group model takes " + std::to_string(group->input_size) +
                                       " inputs but NumGroups * "
                                       "NumItemsPerGroup * 6 = " +
                                       std::to_string(want),
                                   group_at);
    n.group = std::move(*group);
  }
  if (!c.at_end())
    return core::error_at_offset(codes::NMN_TRAILING,
                                 std::to_string(c.remaining()) + " bytes after the last model",
                                 c.offset());
  return n;
}

}  // namespace charkit::deformer
