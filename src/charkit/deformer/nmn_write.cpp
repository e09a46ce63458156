// Writing `.nmn` files in the engine's layout (docs/deformer/nmn.md): 10 uint32
// header values, 64-byte aligned arrays from the file start, the runtime name
// with its NUL counted, each model blob 64-byte aligned from the file start
// with its arrays 64-byte aligned from the blob start, nothing after the last
// blob.
#include <string>

#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/nmn.h"

namespace charkit::deformer {
namespace {

core::Error bad(std::string message) {
  return core::make_error(codes::NMN_WRITE, std::move(message));
}

class ModelWriter {
 public:
  std::optional<core::Error> layer(const NmnLayer& l, std::size_t depth) {
    const std::string name(nmn_layer_name(static_cast<std::uint32_t>(l.type)));
    if (!nmn_layer_supported(static_cast<std::uint32_t>(l.type)))
      return bad("layer type " + std::to_string(static_cast<std::uint32_t>(l.type)) + " (" + name +
                 ") cannot be written");
    u32(static_cast<std::uint32_t>(l.type));
    auto need = [&](const std::vector<float>& v, std::uint64_t n, const char* what) -> bool {
      return v.size() == n || (err_ = bad(name + " " + what + " holds " + std::to_string(v.size()) +
                                          " values, expected " + std::to_string(n)),
                               false);
    };
    switch (l.type) {
      case NmnLayerType::kSequence:
        if (depth >= kNmnMaxDepth) return bad("Sequence layers nested too deep");
        if (l.in != (l.children.empty() ? 0 : l.children.front().in) ||
            l.out != (l.children.empty() ? 0 : l.children.back().out))
          return bad(
              "Sequence in/out must be its first layer's input and last layer's output sizes");
        u32(static_cast<std::uint32_t>(l.children.size()));
        for (std::size_t i = 0; i < l.children.size(); ++i) {
          if (i > 0 && l.children[i].in != l.children[i - 1].out)
            return bad("Sequence layer " + std::to_string(i) + " takes " +
                       std::to_string(l.children[i].in) + " inputs, the layer before gives " +
                       std::to_string(l.children[i - 1].out));
          if (auto e = layer(l.children[i], depth + 1)) return e;
        }
        return std::nullopt;
      case NmnLayerType::kLinear:
        u32(l.in);
        u32(l.out);
        if (!need(l.biases, l.out, "biases") ||
            !need(l.weights, std::uint64_t{l.in} * l.out, "weights"))
          return err_;
        floats(l.biases);
        floats(l.weights);
        return std::nullopt;
      case NmnLayerType::kCompressedLinear:
        u32(l.in);
        u32(l.out);
        if (!need(l.offsets, l.in, "offsets") || !need(l.scales, l.in, "scales") ||
            !need(l.biases, l.out, "biases"))
          return err_;
        if (l.qweights.size() != std::uint64_t{l.in} * l.out)
          return bad("CompressedLinear weights: wrong count");
        floats(l.offsets);
        floats(l.scales);
        floats(l.biases);
        w_.pad_to(64);
        for (auto q : l.qweights) w_.write(q);
        return std::nullopt;
      case NmnLayerType::kMultiLinear:
        if (std::uint64_t{l.blocks} * l.rows != l.in || std::uint64_t{l.blocks} * l.cols != l.out)
          return bad("MultiLinear in/out must be blocks*rows and blocks*cols");
        u32(l.blocks);
        u32(l.rows);
        u32(l.cols);
        if (!need(l.biases, std::uint64_t{l.blocks} * l.cols, "biases") ||
            !need(l.weights, std::uint64_t{l.blocks} * l.rows * l.cols, "weights"))
          return err_;
        floats(l.biases);
        floats(l.weights);
        return std::nullopt;
      case NmnLayerType::kRelu:
      case NmnLayerType::kElu:
      case NmnLayerType::kTanh:
      case NmnLayerType::kGelu:
      case NmnLayerType::kCopy:
        if (l.in != l.out) return bad(name + " must have in == out");
        u32(l.in);
        return std::nullopt;
      case NmnLayerType::kNormalize:
      case NmnLayerType::kDenormalize:
      case NmnLayerType::kClamp:
        if (l.in != l.out || !need(l.a, l.in, "first array") || !need(l.b, l.in, "second array"))
          return err_ ? err_ : bad(name + " must have in == out");
        u32(l.in);
        floats(l.a);
        floats(l.b);
        return std::nullopt;
      case NmnLayerType::kPrelu:
        if (l.in != l.out || !need(l.a, l.in, "alpha"))
          return err_ ? err_ : bad("PReLU must have in == out");
        u32(l.in);
        floats(l.a);
        return std::nullopt;
      default:
        return bad("layer type " + name + " cannot be written");
    }
  }

  core::ByteWriter& out() { return w_; }

 private:
  void u32(std::uint32_t v) {
    w_.pad_to(4);
    w_.write(v);
  }
  void floats(const std::vector<float>& v) {
    w_.pad_to(64);
    for (float f : v) w_.write_f32(f);
  }
  core::ByteWriter w_;
  std::optional<core::Error> err_;
};

}  // namespace

core::Result<std::vector<std::uint8_t>> write_nmn_model(const NmnModel& model) {
  if (model.input_size != model.root.in || model.output_size != model.root.out)
    return bad("model input/output sizes differ from its root layer's");
  ModelWriter mw;
  mw.out().write(kNmnModelMagic);
  mw.out().write(kNmnModelVersion);
  if (auto e = mw.layer(model.root, 0)) return *e;
  return std::move(mw.out()).take();
}

core::Result<std::vector<std::uint8_t>> write_nmn(const NmnNetwork& n) {
  const std::uint64_t inputs = n.input_count();
  if (n.input_mean.size() != inputs || n.input_std.size() != inputs)
    return bad("input mean/std hold " + std::to_string(n.input_mean.size()) + "/" +
               std::to_string(n.input_std.size()) + " values, the header needs " +
               std::to_string(inputs));
  if (n.main.input_size != inputs)
    return bad("main model takes " + std::to_string(n.main.input_size) +
               " inputs, the header gives " + std::to_string(inputs));
  if (n.num_floats_per_curve != (n.mode == NmnMode::kGlobal ? 1u : 6u))
    return bad("NumFloatsPerCurve must be 1 in global mode and 6 in local mode");
  const bool want_group = n.mode == NmnMode::kLocal && n.num_groups > 0;
  if (want_group != n.group.has_value())
    return bad(want_group ? "local mode with groups needs a group model"
                          : "only local mode with groups has a group model");
  if (n.runtime_name.find('\0') != std::string::npos) return bad("runtime name holds a NUL");

  core::ByteWriter w;
  for (std::uint32_t v : {kNmnMagic, kNmnVersion, static_cast<std::uint32_t>(n.mode), n.num_morphs,
                          n.num_morphs_per_bone, n.num_bones, n.num_curves, n.num_groups,
                          n.num_items_per_group, n.num_floats_per_curve})
    w.write(v);
  w.pad_to(64);
  for (float f : n.input_mean) w.write_f32(f);
  w.pad_to(64);
  for (float f : n.input_std) w.write_f32(f);
  w.pad_to(4);
  w.write(static_cast<std::uint32_t>(n.runtime_name.size() + 1));
  w.write_string(n.runtime_name);
  w.write(std::uint8_t{0});
  auto blob = [&](const NmnModel& m) -> std::optional<core::Error> {
    auto bytes = write_nmn_model(m);
    if (!bytes) return bytes.error();
    w.pad_to(4);
    w.write(static_cast<std::uint32_t>(bytes->size()));
    w.pad_to(64);
    w.write_bytes(*bytes);
    return std::nullopt;
  };
  if (auto e = blob(n.main)) return *e;
  if (n.group) {
    if (auto e = blob(*n.group)) return *e;
  }
  return std::move(w).take();
}

}  // namespace charkit::deformer
