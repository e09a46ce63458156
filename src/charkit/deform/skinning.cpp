#include "charkit/deform/skinning.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "charkit/core/math.h"
#include "charkit/deform/error_codes.h"

namespace charkit::deform {

using core::make_error;
using core::Ok;
using core::Status;

namespace {

// Column-major: element (row r, column c) is m[c * 4 + r].
double at(std::span<const float> m, std::size_t joint, int r, int c) {
  return static_cast<double>(m[joint * 16 + static_cast<std::size_t>(c * 4 + r)]);
}

/// The sizes a pose may change: 16 floats per joint, 3 per vertex out.
Status check_pose(const SkinView& skin, std::size_t joint_count, std::span<const float> matrices,
                  std::size_t out_size) {
  if (matrices.size() != joint_count * 16)
    return make_error(codes::DEFORM_SHAPE, std::to_string(matrices.size()) + " matrix floats for " +
                                               std::to_string(joint_count) +
                                               " joints; 16 per joint are needed");
  if (out_size != skin.rest_positions.size())
    return make_error(codes::DEFORM_SHAPE, "output is not 3 floats per vertex");
  return Ok{};
}

constexpr std::size_t kSkinGrain = 4096;

// The normalised weights of vertex v; false when they sum to 0.
bool normalised(const SkinView& skin, std::size_t v, double w[4]) {
  double sum = 0.0;
  for (int i = 0; i < 4; ++i) {
    w[i] = static_cast<double>(skin.weights[v * 4 + static_cast<std::size_t>(i)]);
    sum += w[i];
  }
  if (!(sum > 0.0)) return false;
  for (int i = 0; i < 4; ++i) w[i] /= sum;
  return true;
}

void lbs_vertex(const SkinView& skin, std::span<const float> m, std::size_t v, double p[3]) {
  double w[4];
  const double r[3] = {skin.rest_positions[v * 3], skin.rest_positions[v * 3 + 1],
                       skin.rest_positions[v * 3 + 2]};
  if (!normalised(skin, v, w)) {
    for (int k = 0; k < 3; ++k) p[k] = r[k];
    return;
  }
  p[0] = p[1] = p[2] = 0.0;
  for (int i = 0; i < 4; ++i) {
    if (w[i] == 0.0) continue;
    const std::size_t j = skin.joints[v * 4 + static_cast<std::size_t>(i)];
    for (int row = 0; row < 3; ++row)
      p[row] += w[i] * (at(m, j, row, 0) * r[0] + at(m, j, row, 1) * r[1] +
                        at(m, j, row, 2) * r[2] + at(m, j, row, 3));
  }
}

using Quat = core::Quatd;

// One joint split for DQS: rotation q, translation t, remainder S = Rᵀ A.
struct JointDq {
  Quat q;
  double t[3];
  double s[3][3];
};

JointDq split_joint(std::span<const float> m, std::size_t j) {
  JointDq d{};
  core::Mat3d a{};
  core::Mat3d cols{};  // normalised columns
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 3; ++c)
      core::at(a, r, c) = at(m, j, static_cast<int>(r), static_cast<int>(c));
  for (std::size_t c = 0; c < 3; ++c) {
    const double n =
        std::sqrt(core::at(a, 0, c) * core::at(a, 0, c) + core::at(a, 1, c) * core::at(a, 1, c) +
                  core::at(a, 2, c) * core::at(a, 2, c));
    for (std::size_t r = 0; r < 3; ++r)
      core::at(cols, r, c) = n > 0.0 ? core::at(a, r, c) / n : (r == c ? 1.0 : 0.0);
  }
  d.q = core::quat_from_mat3(cols);
  const core::Mat3d rot = core::mat3_from_quat(d.q);
  for (std::size_t r = 0; r < 3; ++r) {
    d.t[r] = at(m, j, static_cast<int>(r), 3);
    for (std::size_t c = 0; c < 3; ++c)
      d.s[r][c] = core::at(rot, 0, r) * core::at(a, 0, c) +
                  core::at(rot, 1, r) * core::at(a, 1, c) + core::at(rot, 2, r) * core::at(a, 2, c);
  }
  return d;
}

}  // namespace

Status SkinView::validate(std::size_t joint_count) const {
  const std::size_t vc = rest_positions.size() / 3;
  if (rest_positions.size() % 3 != 0)
    return make_error(codes::DEFORM_SHAPE, "rest positions are not 3 floats per vertex");
  if (joints.size() != vc * 4 || weights.size() != vc * 4)
    return make_error(codes::DEFORM_SHAPE, "joints and weights must be 4 per vertex (" +
                                               std::to_string(vc) + " vertices)");
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const float w = weights[i];
    if (!std::isfinite(w) || w < 0.0F)
      return make_error(codes::DEFORM_WEIGHT,
                        "vertex " + std::to_string(i / 4) + " has a negative or non-finite weight");
    if (w != 0.0F && joints[i] >= joint_count)
      return make_error(codes::DEFORM_JOINT, "vertex " + std::to_string(i / 4) + " uses joint " +
                                                 std::to_string(joints[i]) + " of " +
                                                 std::to_string(joint_count));
  }
  return Ok{};
}

namespace {

void lbs_range(const SkinView& skin, std::span<const float> matrices, std::span<float> out,
               std::size_t lo, std::size_t hi) {
  for (std::size_t v = lo; v < hi; ++v) {
    double p[3];
    lbs_vertex(skin, matrices, v, p);
    for (int k = 0; k < 3; ++k) out[v * 3 + static_cast<std::size_t>(k)] = static_cast<float>(p[k]);
  }
}

void dqs_range(const SkinView& skin, std::span<const float> matrices, std::span<float> out,
               std::size_t lo, std::size_t hi) {
  for (std::size_t v = lo; v < hi; ++v) {
    const double r[3] = {skin.rest_positions[v * 3], skin.rest_positions[v * 3 + 1],
                         skin.rest_positions[v * 3 + 2]};
    double w[4];
    float* o = &out[v * 3];
    if (!normalised(skin, v, w)) {
      for (int k = 0; k < 3; ++k) o[k] = static_cast<float>(r[k]);
      continue;
    }
    JointDq jd[4];
    int dominant = 0;
    for (int i = 0; i < 4; ++i) {
      if (w[i] > w[dominant]) dominant = i;
      if (w[i] != 0.0)
        jd[i] = split_joint(matrices, skin.joints[v * 4 + static_cast<std::size_t>(i)]);
    }
    Quat real{0, 0, 0, 0}, dual{0, 0, 0, 0};
    double s[3][3] = {};
    const Quat& qd = jd[dominant].q;
    for (int i = 0; i < 4; ++i) {
      if (w[i] == 0.0) continue;
      const Quat& q = jd[i].q;
      // Antipodality: q and -q are the same rotation; blend the one on the
      // dominant influence's side so the blend takes the short way round.
      const double sign = (q.x * qd.x + q.y * qd.y + q.z * qd.z + q.w * qd.w) < 0.0 ? -1.0 : 1.0;
      const double ws = w[i] * sign;
      // Dual part of a rigid transform (q, t): 0.5 * (t, 0) * q.
      const Quat d = core::multiply(Quat{jd[i].t[0], jd[i].t[1], jd[i].t[2], 0.0}, q);
      real = {real.x + ws * q.x, real.y + ws * q.y, real.z + ws * q.z, real.w + ws * q.w};
      dual = {dual.x + 0.5 * ws * d.x, dual.y + 0.5 * ws * d.y, dual.z + 0.5 * ws * d.z,
              dual.w + 0.5 * ws * d.w};
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) s[a][b] += w[i] * jd[i].s[a][b];
    }
    const double n =
        std::sqrt(real.x * real.x + real.y * real.y + real.z * real.z + real.w * real.w);
    if (!(n > 0.0)) {  // cannot happen after the sign fix; stay put if it does
      for (int k = 0; k < 3; ++k) o[k] = static_cast<float>(r[k]);
      continue;
    }
    const Quat q{real.x / n, real.y / n, real.z / n, real.w / n};
    const Quat d{dual.x / n, dual.y / n, dual.z / n, dual.w / n};
    // Translation of the normalised dual quaternion: 2 (w dv - dw v + v × dv).
    const double t[3] = {2 * (q.w * d.x - d.w * q.x + (q.y * d.z - q.z * d.y)),
                         2 * (q.w * d.y - d.w * q.y + (q.z * d.x - q.x * d.z)),
                         2 * (q.w * d.z - d.w * q.z + (q.x * d.y - q.y * d.x))};
    double sr[3];
    for (int a = 0; a < 3; ++a) sr[a] = s[a][0] * r[0] + s[a][1] * r[1] + s[a][2] * r[2];
    const core::Mat3d rot = core::mat3_from_quat(q);
    for (std::size_t a = 0; a < 3; ++a)
      o[a] = static_cast<float>(core::at(rot, a, 0) * sr[0] + core::at(rot, a, 1) * sr[1] +
                                core::at(rot, a, 2) * sr[2] + t[a]);
  }
}

}  // namespace

Status SkinJob::validate() const {
  if (auto st = skin.validate(joint_count); !st) return st;
  return check_pose(skin, joint_count, matrices, out.size());
}

Status SkinJob::run(const core::RunOptions& options) const {
  if (auto st = check_pose(skin, joint_count, matrices, out.size()); !st) return st;
  const std::size_t n = skin.vertex_count();
  options.executor_or_serial().parallel_for(0, n, options.grain(n, kSkinGrain),
                                            [this](std::size_t lo, std::size_t hi) {
                                              if (method == SkinMethod::kDualQuaternion)
                                                dqs_range(skin, matrices, out, lo, hi);
                                              else
                                                lbs_range(skin, matrices, out, lo, hi);
                                            });
  return Ok{};
}

core::Result<DeltaMush> DeltaMush::create(const SkinView& skin, std::size_t joint_count,
                                          std::span<const std::uint32_t> triangles,
                                          const DeltaMushOptions& options) {
  if (auto st = skin.validate(joint_count); !st) return std::move(st).error();
  if (!(options.step > 0.0 && options.step <= 1.0))
    return make_error(codes::DEFORM_OPTION, "Delta Mush step must be in (0, 1]");
  if (options.iterations > options.max_iterations)
    return make_error(codes::DEFORM_OPTION, "Delta Mush iterations above the limit of " +
                                                std::to_string(options.max_iterations));
  if (triangles.size() % 3 != 0)
    return make_error(codes::DEFORM_SHAPE, "triangle indices are not a multiple of 3");
  const std::size_t vc = skin.vertex_count();
  for (std::size_t i = 0; i < triangles.size(); ++i)
    if (triangles[i] >= vc)
      return make_error(codes::DEFORM_INDEX, "triangle " + std::to_string(i / 3) + " uses vertex " +
                                                 std::to_string(triangles[i]) + " of " +
                                                 std::to_string(vc));
  DeltaMush dm;
  dm.rest_.assign(skin.rest_positions.begin(), skin.rest_positions.end());
  dm.joints_.assign(skin.joints.begin(), skin.joints.end());
  dm.weights_.assign(skin.weights.begin(), skin.weights.end());
  dm.joint_count_ = joint_count;
  dm.triangles_.assign(triangles.begin(), triangles.end());
  dm.options_ = options;

  // Neighbour lists: every (a, b) edge of every triangle both ways, sorted and
  // made unique per vertex so shared edges count once.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  edges.reserve(triangles.size() * 2);
  for (std::size_t t = 0; t + 2 < triangles.size(); t += 3)
    for (int e = 0; e < 3; ++e) {
      const std::uint32_t a = triangles[t + static_cast<std::size_t>(e)];
      const std::uint32_t b = triangles[t + static_cast<std::size_t>((e + 1) % 3)];
      if (a == b) continue;
      edges.emplace_back(a, b);
      edges.emplace_back(b, a);
    }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  dm.adj_start_.assign(vc + 1, 0);
  for (const auto& e : edges) ++dm.adj_start_[e.first + 1];
  for (std::size_t v = 0; v < vc; ++v) dm.adj_start_[v + 1] += dm.adj_start_[v];
  dm.adj_.reserve(edges.size());
  for (const auto& e : edges) dm.adj_.push_back(e.second);

  dm.skinned_.resize(vc * 3);
  dm.a_.resize(vc * 3);
  dm.b_.resize(vc * 3);
  dm.normals_.resize(vc * 3);
  dm.local_delta_.resize(vc * 3);

  // Rest deltas: rest - smoothed rest, in the smoothed rest frame.
  for (std::size_t i = 0; i < vc * 3; ++i) dm.a_[i] = static_cast<double>(dm.rest_[i]);
  dm.smooth(dm.a_, dm.b_);
  dm.compute_normals(dm.a_);
  for (std::size_t v = 0; v < vc; ++v) {
    double f[9];
    dm.frame(dm.a_, v, f);
    double d[3];
    for (int k = 0; k < 3; ++k) d[k] = static_cast<double>(dm.rest_[v * 3 + k]) - dm.a_[v * 3 + k];
    // Frame rows are t, n, b; local = F d (F orthonormal, so F⁻¹ = Fᵀ).
    for (int r = 0; r < 3; ++r)
      dm.local_delta_[v * 3 + r] = f[r * 3] * d[0] + f[r * 3 + 1] * d[1] + f[r * 3 + 2] * d[2];
  }
  return dm;
}

// Laplacian smoothing of a (3 per vertex) for the configured passes; b is
// scratch. The result is left in a.
void DeltaMush::smooth(std::vector<double>& a, std::vector<double>& b) const {
  const std::size_t vc = vertex_count();
  for (std::size_t it = 0; it < options_.iterations; ++it) {
    for (std::size_t v = 0; v < vc; ++v) {
      const std::uint32_t s = adj_start_[v], e = adj_start_[v + 1];
      for (int k = 0; k < 3; ++k) {
        const double p = a[v * 3 + k];
        if (s == e) {
          b[v * 3 + k] = p;
          continue;
        }
        double sum = 0.0;
        for (std::uint32_t n = s; n < e; ++n) sum += a[std::size_t{adj_[n]} * 3 + k];
        b[v * 3 + k] = p + options_.step * (sum / static_cast<double>(e - s) - p);
      }
    }
    a.swap(b);
  }
}

// Area-weighted vertex normals of positions p into normals_.
void DeltaMush::compute_normals(const std::vector<double>& p) {
  std::fill(normals_.begin(), normals_.end(), 0.0);
  for (std::size_t t = 0; t + 2 < triangles_.size(); t += 3) {
    const std::size_t i0 = triangles_[t], i1 = triangles_[t + 1], i2 = triangles_[t + 2];
    const double e1[3] = {p[i1 * 3] - p[i0 * 3], p[i1 * 3 + 1] - p[i0 * 3 + 1],
                          p[i1 * 3 + 2] - p[i0 * 3 + 2]};
    const double e2[3] = {p[i2 * 3] - p[i0 * 3], p[i2 * 3 + 1] - p[i0 * 3 + 1],
                          p[i2 * 3 + 2] - p[i0 * 3 + 2]};
    // The cross product's length is twice the area: area weighting for free.
    const double c[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                         e1[0] * e2[1] - e1[1] * e2[0]};
    for (std::size_t i : {i0, i1, i2})
      for (int k = 0; k < 3; ++k) normals_[i * 3 + k] += c[k];
  }
}

// Frame of vertex v on positions p (normals_ computed for p), rows t, n, b;
// the world axes where the construction fails (see the header).
void DeltaMush::frame(const std::vector<double>& p, std::size_t v, double* f) const {
  const auto& nrm = normals_;
  static constexpr double kWorld[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  std::copy(kWorld, kWorld + 9, f);
  double n[3] = {nrm[v * 3], nrm[v * 3 + 1], nrm[v * 3 + 2]};
  const double nl = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  if (adj_start_[v] == adj_start_[v + 1] || !(nl > 1e-30) || !std::isfinite(nl)) return;
  for (double& x : n) x /= nl;
  const std::size_t nb = adj_[adj_start_[v]];
  double t[3] = {p[nb * 3] - p[v * 3], p[nb * 3 + 1] - p[v * 3 + 1], p[nb * 3 + 2] - p[v * 3 + 2]};
  const double dn = t[0] * n[0] + t[1] * n[1] + t[2] * n[2];
  for (int k = 0; k < 3; ++k) t[k] -= dn * n[k];
  const double tl = std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
  if (!(tl > 1e-30) || !std::isfinite(tl)) return;
  for (double& x : t) x /= tl;
  const double b[3] = {n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2],
                       n[0] * t[1] - n[1] * t[0]};
  const double rows[9] = {t[0], t[1], t[2], n[0], n[1], n[2], b[0], b[1], b[2]};
  std::copy(rows, rows + 9, f);
}

Status DeltaMush::deform(std::span<const float> matrices, std::span<float> out) {
  const SkinView skin{rest_, joints_, weights_};
  if (matrices.size() % 16 != 0 || matrices.size() < joint_count_ * 16)
    return make_error(codes::DEFORM_SHAPE, std::to_string(matrices.size()) + " matrix floats for " +
                                               std::to_string(joint_count_) +
                                               " joints; 16 per joint are needed");
  lbs_range(skin, matrices, skinned_, 0, skin.vertex_count());
  if (out.size() != rest_.size())
    return make_error(codes::DEFORM_SHAPE, "output is not 3 floats per vertex");
  const std::size_t vc = vertex_count();
  for (std::size_t i = 0; i < vc * 3; ++i) a_[i] = static_cast<double>(skinned_[i]);
  smooth(a_, b_);
  compute_normals(a_);
  for (std::size_t v = 0; v < vc; ++v) {
    double f[9];
    frame(a_, v, f);
    const double* d = &local_delta_[v * 3];
    // world = Fᵀ local (rows of F are the frame axes).
    for (int k = 0; k < 3; ++k)
      out[v * 3 + static_cast<std::size_t>(k)] =
          static_cast<float>(a_[v * 3 + k] + f[k] * d[0] + f[3 + k] * d[1] + f[6 + k] * d[2]);
  }
  return Ok{};
}

core::Result<std::array<double, 3>> inverse_lbs_point(std::span<const std::uint32_t, 4> joints,
                                                      std::span<const float, 4> weights,
                                                      std::span<const float> matrices,
                                                      std::array<double, 3> posed) {
  if (matrices.size() % 16 != 0)
    return make_error(codes::DEFORM_SHAPE, "skinning matrices are not a multiple of 16 floats");
  const std::size_t jc = matrices.size() / 16;
  double sum = 0.0;
  for (float w : weights) sum += static_cast<double>(w);
  if (!(sum > 0.0) || !std::isfinite(sum))
    return make_error(codes::DEFORM_SINGULAR, "weights sum to zero");
  core::Mat3d a{};
  double t[3] = {};
  for (int i = 0; i < 4; ++i) {
    const double w = static_cast<double>(weights[static_cast<std::size_t>(i)]) / sum;
    if (w == 0.0) continue;
    const std::size_t j = joints[static_cast<std::size_t>(i)];
    if (j >= jc)
      return make_error(codes::DEFORM_JOINT,
                        "joint " + std::to_string(j) + " of " + std::to_string(jc));
    for (std::size_t r = 0; r < 3; ++r) {
      for (std::size_t c = 0; c < 3; ++c)
        core::at(a, r, c) += w * at(matrices, j, static_cast<int>(r), static_cast<int>(c));
      t[r] += w * at(matrices, j, static_cast<int>(r), 3);
    }
  }
  const double det = core::determinant(a);
  // Relative test: compare with the product of the row lengths (Hadamard's
  // bound), so a uniformly scaled rig is not called singular.
  double bound = 1.0;
  for (std::size_t r = 0; r < 3; ++r)
    bound *=
        std::sqrt(core::at(a, r, 0) * core::at(a, r, 0) + core::at(a, r, 1) * core::at(a, r, 1) +
                  core::at(a, r, 2) * core::at(a, r, 2));
  if (!(std::abs(det) > 1e-12 * bound) || !std::isfinite(det))
    return make_error(codes::DEFORM_SINGULAR, "the blended skinning matrix is singular");
  const double b[3] = {posed[0] - t[0], posed[1] - t[1], posed[2] - t[2]};
  // Cramer's rule: x_c = det(A with column c replaced by b) / det(A).
  std::array<double, 3> x{};
  for (std::size_t c = 0; c < 3; ++c) {
    core::Mat3d m = a;
    for (std::size_t r = 0; r < 3; ++r) core::at(m, r, c) = b[r];
    x[c] = core::determinant(m) / det;
  }
  return x;
}

Status InverseSkinJob::validate() const {
  if (auto st = skin.validate(joint_count); !st) return st;
  if (posed.size() != skin.rest_positions.size())
    return make_error(codes::DEFORM_SHAPE, "posed positions are not 3 floats per vertex");
  return check_pose(skin, joint_count, matrices, out.size());
}

namespace {

Status inverse_range(const InverseSkinJob& job, std::size_t lo, std::size_t hi) {
  const SkinView& skin = job.skin;
  for (std::size_t v = lo; v < hi; ++v) {
    double w[4];
    if (!normalised(skin, v, w)) {  // LBS leaves such a vertex alone; so does its inverse
      for (std::size_t k = 0; k < 3; ++k) job.out[v * 3 + k] = job.posed[v * 3 + k];
      continue;
    }
    auto p = inverse_lbs_point(skin.joints.subspan(v * 4).first<4>(),
                               skin.weights.subspan(v * 4).first<4>(), job.matrices,
                               {job.posed[v * 3], job.posed[v * 3 + 1], job.posed[v * 3 + 2]});
    if (!p) {
      auto e = std::move(p).error();
      e.message = "vertex " + std::to_string(v) + ": " + e.message;
      return e;
    }
    for (int k = 0; k < 3; ++k)
      job.out[v * 3 + static_cast<std::size_t>(k)] =
          static_cast<float>((*p)[static_cast<std::size_t>(k)]);
  }
  return Ok{};
}

}  // namespace

Status InverseSkinJob::run(const core::RunOptions& options) const {
  if (auto st = check_pose(skin, joint_count, matrices, out.size()); !st) return st;
  if (posed.size() != skin.rest_positions.size())
    return make_error(codes::DEFORM_SHAPE, "posed positions are not 3 floats per vertex");
  const std::size_t n = skin.vertex_count();
  if (options.executor == nullptr) return inverse_range(*this, 0, n);
  // Chunks are disjoint and each stops at its first failure: the failing
  // chunk that starts lowest holds the first failing vertex.
  std::mutex mutex;
  std::size_t first_lo = n;
  Status first = Ok{};
  options.executor->parallel_for(0, n, options.grain(n, kSkinGrain),
                                 [&](std::size_t lo, std::size_t hi) {
                                   Status st = inverse_range(*this, lo, hi);
                                   if (st) return;
                                   const std::lock_guard<std::mutex> lock(mutex);
                                   if (lo < first_lo) {
                                     first_lo = lo;
                                     first = std::move(st);
                                   }
                                 });
  return first;
}

}  // namespace charkit::deform
