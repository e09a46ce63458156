// Reference skinning deformers on plain arrays (docs/deformer/rig.md): linear
// blend skinning (LBS) and dual-quaternion skinning (DQS) as a job
// (core/job.h), inverse LBS (posed point -> bind-space point) as a job, and
// Delta Mush on top of LBS (an object: it precomputes from the rest mesh).
//
// Layout shared by everything here (plain arrays, no scene types: the
// kernels stay below the file formats):
// - rest positions: 3 floats per vertex (x, y, z), bind space;
// - joints: 4 joint indices per vertex; weights: 4 floats per vertex. Weights
//   are normalised per vertex by their sum (a vertex whose weights sum to 0
//   stays at its rest position);
// - skinning matrices: 16 floats per joint, column-major (glTF order), each
//   the joint's posed world matrix times its inverse bind matrix.
// Arithmetic is in double; results are stored as float.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "charkit/core/job.h"
#include "charkit/core/result.h"

namespace charkit::deform {

/// The skin of a mesh: views, not owned; all three must outlive the call.
struct SkinView {
  std::span<const float> rest_positions;  ///< 3 per vertex
  std::span<const std::uint32_t> joints;  ///< 4 per vertex
  std::span<const float> weights;         ///< 4 per vertex

  std::size_t vertex_count() const { return rest_positions.size() / 3; }

  /// Sizes agree, every weight finite and >= 0, every joint with a non-zero
  /// weight below joint_count. Errors: DEFORM_SHAPE, DEFORM_WEIGHT,
  /// DEFORM_JOINT (each naming the vertex).
  core::Status validate(std::size_t joint_count) const;
};

enum class SkinMethod : std::uint8_t {
  /// Linear blend skinning: out[v] = Σ w_i M_{j_i} rest[v].
  kLinear,
  /// Dual-quaternion skinning. Each matrix A|t is split into a rotation R
  /// (the quaternion of A's normalised columns, renormalised) and a
  /// remainder S = Rᵀ A (identity for a rigid joint; the scale/shear
  /// otherwise). The remainders are blended linearly and applied first,
  /// then the blended unit dual quaternion (every influence's quaternion
  /// sign-aligned with the dominant influence's, the antipodality fix):
  /// v' = DQ(Σ w S v). A single influence therefore reproduces its matrix
  /// exactly, scaled or not.
  kDualQuaternion,
};

/// Skinning of a mesh as a job: fill it, validate() once, then set new
/// matrices (the same count) and run() per pose.
struct SkinJob {
  SkinView skin;
  std::size_t joint_count = 0;
  std::span<const float> matrices;  ///< 16 per joint
  std::span<float> out;             ///< 3 per vertex
  SkinMethod method = SkinMethod::kLinear;

  /// skin.validate(joint_count), then the matrix and output sizes
  /// (DEFORM_SHAPE).
  core::Status validate() const;
  /// The vertices split over the executor when there is one (the same
  /// bits). Checks the matrix and output sizes again (they change per pose;
  /// DEFORM_SHAPE), not the skin. Allocates nothing.
  core::Status run(const core::RunOptions& options = {}) const;
};

struct DeltaMushOptions {
  std::size_t iterations = 10;  ///< Laplacian smoothing passes (0: Delta Mush = LBS)
  double step = 0.5;            ///< p += step * (mean of neighbours - p), in (0, 1]
  std::size_t max_iterations = 1000;
};

/// Delta Mush: smooth the rest mesh, store each vertex's offset from its
/// smoothed position in a tangent frame of the smoothed rest mesh; at run time
/// skin with LBS, smooth the result the same way, rebuild the frames and add
/// the offsets back. Frame of vertex i (on a smoothed mesh): n = normalised
/// sum of the (area-weighted) normals of the triangles using i; t = the edge
/// to i's first neighbour (lowest vertex index) with its n component removed,
/// normalised; b = n × t. Where that fails (no triangle, zero normal, edge
/// along n) the frame is the world axes, for rest and pose alike.
class DeltaMush {
 public:
  /// Copies what it needs from skin (the views may die afterwards). triangles:
  /// 3 vertex indices each. Errors: SkinView::validate()'s, DEFORM_SHAPE,
  /// DEFORM_INDEX (triangle index out of range), DEFORM_OPTION (step not in
  /// (0, 1] or iterations > max_iterations).
  static core::Result<DeltaMush> create(const SkinView& skin, std::size_t joint_count,
                                        std::span<const std::uint32_t> triangles,
                                        const DeltaMushOptions& options = {});

  /// Deform with the given skinning matrices into out (3 per vertex).
  /// Allocates nothing. Errors: DEFORM_SHAPE.
  core::Status deform(std::span<const float> matrices, std::span<float> out);

  std::size_t vertex_count() const { return rest_.size() / 3; }

 private:
  DeltaMush() = default;
  void smooth(std::vector<double>& a, std::vector<double>& b) const;
  void compute_normals(const std::vector<double>& p);
  void frame(const std::vector<double>& p, std::size_t v, double* f) const;

  std::vector<float> rest_;
  std::vector<std::uint32_t> joints_;
  std::vector<float> weights_;
  std::size_t joint_count_ = 0;
  std::vector<std::uint32_t> triangles_;
  std::vector<std::uint32_t> adj_start_;  ///< CSR neighbour lists, sorted
  std::vector<std::uint32_t> adj_;
  DeltaMushOptions options_;
  std::vector<double> local_delta_;  ///< 3 per vertex, in the rest frame
  // Scratch for deform(): no allocation per call.
  std::vector<float> skinned_;
  std::vector<double> a_, b_, normals_;
};

/// Inverse LBS of one vertex: the bind-space point p with
/// (Σ w_i M_{j_i}) p = posed. Errors: DEFORM_JOINT, DEFORM_SHAPE,
/// DEFORM_SINGULAR (the blended 3x3 part is singular or weights sum to 0).
core::Result<std::array<double, 3>> inverse_lbs_point(std::span<const std::uint32_t, 4> joints,
                                                      std::span<const float, 4> weights,
                                                      std::span<const float> matrices,
                                                      std::array<double, 3> posed);

/// Inverse LBS of a whole mesh as a job: the bind-space points that LBS
/// maps onto `posed`; a vertex whose weights sum to 0 (left at rest by LBS)
/// is copied.
struct InverseSkinJob {
  SkinView skin;
  std::size_t joint_count = 0;
  std::span<const float> matrices;  ///< 16 per joint
  std::span<const float> posed;     ///< 3 per vertex
  std::span<float> out;             ///< 3 per vertex

  /// skin.validate(joint_count), then the matrix, posed and output sizes.
  core::Status validate() const;
  /// As SkinJob::run; fails with inverse_lbs_point()'s error for the first
  /// vertex (lowest index) it fails for, naming it.
  core::Status run(const core::RunOptions& options = {}) const;
};

}  // namespace charkit::deform
