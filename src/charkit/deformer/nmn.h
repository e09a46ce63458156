// Unreal ML Deformer "Neural Morph Model" network files (`.nmn`): read
// (global and local mode), write (engine-exact), execute.
//
// Layout: docs/deformer/nmn.md, from the engine's loader as summarised in
// shared/reference/ue-nmn-notes.md. A `.nmn` is a header, the input
// normalisation, a runtime name and one or two embedded models in the
// engine's basic CPU runtime format (a tree of layers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::deformer {

inline constexpr std::uint32_t kNmnMagic = 0x234A1304u;
inline constexpr std::uint32_t kNmnVersion = 1;
inline constexpr std::uint32_t kNmnModelMagic = 0x0BA51C01u;
inline constexpr std::uint32_t kNmnModelVersion = 1;
/// Deepest nesting of Sequence layers the reader accepts.
inline constexpr std::size_t kNmnMaxDepth = 32;
/// Widest layer (inputs or outputs) the reader accepts: a bound on what the
/// runner allocates, since activation layers carry a size but no arrays.
inline constexpr std::uint32_t kNmnMaxWidth = 1u << 20;
/// Most values the leaf layers of one model may take and give in all (the
/// sum of their input and output sizes, and of MultiLinear's block counts):
/// a bound on the work of one run, which the file need not pay for, since an
/// activation layer is 8 bytes whatever its size.
inline constexpr std::uint64_t kNmnMaxValues = std::uint64_t{1} << 24;

enum class NmnMode : std::uint32_t { kLocal = 0, kGlobal = 1 };

/// Layer type ids of the embedded model format (all of them; the reader
/// supports the ones listed in nmn_layer_supported()).
enum class NmnLayerType : std::uint32_t {
  kSequence = 1,
  kNormalize = 2,
  kDenormalize = 3,
  kLinear = 4,
  kCompressedLinear = 5,
  kMultiLinear = 6,
  kRelu = 7,
  kElu = 8,
  kTanh = 9,
  kPrelu = 10,
  kMemoryCell = 11,
  kCopy = 12,
  kConcat = 13,
  kArray = 14,
  kAggregateSet = 15,
  kAggregateOrExclusive = 16,
  kAggregateOrInclusive = 17,
  kClamp = 18,
  kSparseMixtureOfExperts = 19,
  kGelu = 20,
  kLayerNorm = 21,
  kLipschitzLinear = 22,
};

/// "Linear", "ELU", … for ids 1..22; "unknown" otherwise.
std::string_view nmn_layer_name(std::uint32_t type_id);
/// Whether read_nmn accepts layers of this id.
bool nmn_layer_supported(std::uint32_t type_id);

/// One layer of the tree. Which fields are used depends on the type:
/// - Sequence: children.
/// - Linear: in, out, biases[out], weights[in*out] (row-major by input).
/// - CompressedLinear: in, out, offsets[in], scales[in], biases[out],
///   qweights[in*out]; weight[i][o] = qweights[i*out+o] * scales[i] + offsets[i].
/// - MultiLinear: blocks, rows, cols, biases[blocks*cols],
///   weights[blocks*rows*cols]; in = blocks*rows, out = blocks*cols.
/// - ReLU, ELU, TanH, GELU, Copy: in = out = size.
/// - Normalize / Denormalize: size, a = mean, b = std.
/// - PReLU: size, a = alpha. Clamp: size, a = min, b = max.
struct NmnLayer {
  NmnLayerType type = NmnLayerType::kSequence;
  std::uint32_t in = 0;
  std::uint32_t out = 0;
  std::uint32_t blocks = 0, rows = 0, cols = 0;  ///< MultiLinear
  std::vector<float> biases;
  std::vector<float> weights;
  std::vector<float> offsets, scales;   ///< CompressedLinear
  std::vector<std::uint16_t> qweights;  ///< CompressedLinear
  std::vector<float> a, b;              ///< Normalize/Denormalize/PReLU/Clamp
  std::vector<NmnLayer> children;       ///< Sequence

  /// Number of learned values (weights, biases, offsets, scales, a, b), children included.
  std::uint64_t parameter_count() const;
  bool operator==(const NmnLayer&) const = default;
};

/// An embedded model: the root layer and the sizes it maps between.
struct NmnModel {
  NmnLayer root;
  std::uint32_t input_size = 0;
  std::uint32_t output_size = 0;
  bool operator==(const NmnModel&) const = default;
};

/// A whole `.nmn` file.
struct NmnNetwork {
  NmnMode mode = NmnMode::kGlobal;
  std::uint32_t num_morphs = 0;           ///< global mode; 0 in local mode
  std::uint32_t num_morphs_per_bone = 0;  ///< local mode
  std::uint32_t num_bones = 0;
  std::uint32_t num_curves = 0;
  std::uint32_t num_groups = 0;
  std::uint32_t num_items_per_group = 0;
  std::uint32_t num_floats_per_curve = 1;  ///< 1 in global mode, 6 in local mode
  std::vector<float> input_mean;           ///< input_count() floats
  std::vector<float> input_std;            ///< input_count() floats
  std::string runtime_name;                ///< without the terminating NUL
  NmnModel main;
  std::optional<NmnModel> group;  ///< local mode with num_groups > 0

  /// num_bones * 6 + num_curves * num_floats_per_curve (64-bit: no overflow).
  std::uint64_t input_count() const;
  /// Outputs of one evaluation: main outputs, then group outputs (if any).
  std::uint64_t output_count() const;
  bool operator==(const NmnNetwork&) const = default;
};

/// Parse a whole `.nmn` file. Errors (location = byte offset): NMN_TRUNCATED,
/// NMN_MAGIC, NMN_VERSION, NMN_MODE, NMN_HEADER (inconsistent header fields),
/// NMN_NAME, NMN_MODEL_MAGIC, NMN_MODEL_VERSION, NMN_MODEL_SIZE,
/// NMN_LAYER_UNSUPPORTED (names the id), NMN_LAYER_SIZE (sizes that do not
/// chain, a layer wider than kNmnMaxWidth, or a model whose layers take and
/// give more than kNmnMaxValues values in all), NMN_TOO_DEEP,
/// NMN_MODEL_TRAILING, NMN_TRAILING.
core::Result<NmnNetwork> read_nmn(core::Bytes bytes);

/// Parse one embedded model blob (what follows the size field; base_offset
/// is where the blob sits in the file, for error locations).
core::Result<NmnModel> read_nmn_model(core::Bytes blob, std::uint64_t base_offset = 0);

/// Serialise a network in the engine's layout (both modes; global mode is
/// what the engine's editor loads). Errors: NMN_WRITE (inconsistent network:
/// array sizes, layer sizes that do not chain, a layer type we cannot write).
core::Result<std::vector<std::uint8_t>> write_nmn(const NmnNetwork& network);
/// Serialise one embedded model blob (offsets relative to its own start).
core::Result<std::vector<std::uint8_t>> write_nmn_model(const NmnModel& model);

/// Evaluates a network on raw (un-normalised) input rows. All memory is
/// allocated by create(); run() and run_batch() allocate nothing.
///
/// Per row: x = (raw - input_mean) / input_std, then the main model; in local
/// mode with groups, the group model on the normalised inputs of each
/// group's items (group_items, 6 floats each), outputs appended.
class NmnRunner {
 public:
  /// group_items: num_groups * num_items_per_group item indices (bone b = b,
  /// curve c = num_bones + c); required exactly when the network has a group
  /// model. Errors: NMN_GROUP_ITEMS, NMN_RUNNER (sizes).
  static core::Result<NmnRunner> create(const NmnNetwork& network,
                                        std::span<const std::uint32_t> group_items = {});

  std::size_t input_count() const { return input_count_; }
  std::size_t output_count() const { return output_count_; }

  /// One row: input.size() == input_count(), output.size() == output_count()
  /// (asserted; a programmer error otherwise).
  void run(std::span<const float> input, std::span<float> output);
  /// rows × input_count() row-major in, rows × output_count() out.
  void run_batch(std::span<const float> input, std::span<float> output, std::size_t rows);

  /// One leaf operation of the flattened layer tree (public for the tests of
  /// single activations; see docs/deformer/nmn.md for each function).
  struct Op {
    NmnLayerType type;
    std::uint32_t in = 0, out = 0;
    std::uint32_t blocks = 0, rows = 0, cols = 0;
    std::vector<float> w, bias, a, b;
  };

 private:
  struct Plan {
    std::vector<Op> ops;
    std::size_t in = 0, out = 0;
  };
  static Plan flatten(const NmnModel& model);
  static void eval(const Plan& plan, std::span<const float> in, std::span<float> out,
                   std::vector<float>& s0, std::vector<float>& s1);

  std::size_t input_count_ = 0;
  std::size_t output_count_ = 0;
  std::vector<float> mean_, std_;
  Plan main_, group_;
  bool has_group_ = false;
  std::vector<std::uint32_t> group_items_;
  std::vector<float> norm_, group_in_, s0_, s1_;
};

/// The activation functions as the runtime defines them (docs/deformer/nmn.md).
float nmn_elu(float x);
float nmn_gelu(float x);  ///< x * sigmoid(1.702 x)

}  // namespace charkit::deformer
