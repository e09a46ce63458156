#include "charkit/motion/mediapipe33.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "charkit/core/ascii.h"
#include "charkit/core/json.h"
#include "charkit/core/names.h"
#include "charkit/motion/error_codes.h"

namespace charkit::motion {

namespace {

constexpr std::array<std::string_view, kPointCount> kPointNames = {
    "nose",        "left_eye_inner",  "left_eye",        "left_eye_outer", "right_eye_inner",
    "right_eye",   "right_eye_outer", "left_ear",        "right_ear",      "mouth_left",
    "mouth_right", "left_shoulder",   "right_shoulder",  "left_elbow",     "right_elbow",
    "left_wrist",  "right_wrist",     "left_pinky",      "right_pinky",    "left_index",
    "right_index", "left_thumb",      "right_thumb",     "left_hip",       "right_hip",
    "left_knee",   "right_knee",      "left_ankle",      "right_ankle",    "left_heel",
    "right_heel",  "left_foot_index", "right_foot_index"};

constexpr std::array<std::string_view, kAngleCount> kAngleNames = {
    "shoulder_L", "shoulder_R", "elbow_L", "elbow_R", "hip_L",
    "hip_R",      "knee_L",     "knee_R",  "spine"};

// The default joint table: the model and motion format contract §2.2, verbatim.
// This is the only place it is written down in code.
struct TableRow {
  std::size_t point;
  std::array<std::string_view, 3> names;
};
constexpr TableRow kDefaultTable[] = {
    {0, {"Head", "Neck1", "Head_Nub"}},
    {11, {"LeftShoulder", "LeftArm", "LShoulder"}},
    {12, {"RightShoulder", "RightArm", "RShoulder"}},
    {13, {"LeftForeArm", "LeftElbow", "LElbow"}},
    {14, {"RightForeArm", "RightElbow", "RElbow"}},
    {15, {"LeftHand", "LeftWrist", "LHand"}},
    {16, {"RightHand", "RightWrist", "RHand"}},
    {23, {"LeftUpLeg", "LeftHip", "LHipJoint"}},
    {24, {"RightUpLeg", "RightHip", "RHipJoint"}},
    {25, {"LeftLeg", "LeftKnee", "LKnee"}},
    {26, {"RightLeg", "RightKnee", "RKnee"}},
    {27, {"LeftFoot", "LeftAnkle", "LAnkle"}},
    {28, {"RightFoot", "RightAnkle", "RAnkle"}},
    {31, {"LeftToeBase", "LeftToe", "LToe"}},
    {32, {"RightToeBase", "RightToe", "RToe"}},
};

// Part words of other rigs folded onto the vocabulary of the model and
// motion format contract (skeleton-topology.md §4). Keys are the concatenated
// lower-case words.
struct Synonym {
  std::string_view from, to;
};
constexpr Synonym kPartSynonyms[] = {
    {"thigh", "upleg"},  {"upperleg", "upleg"}, {"femur", "upleg"},      {"calf", "leg"},
    {"shin", "leg"},     {"lowerleg", "leg"},   {"tibia", "leg"},        {"upperarm", "arm"},
    {"shldr", "arm"},    {"humerus", "arm"},    {"lowerarm", "forearm"}, {"radius", "forearm"},
    {"toe0", "toebase"}, {"toes", "toebase"},   {"ball", "toebase"},
};

// Parts that may follow a bare "l"/"r" in all-lower-case names ("lhumerus").
constexpr std::string_view kSidedParts[] = {
    "shoulder", "arm",      "forearm",  "hand",     "wrist",    "elbow",   "upleg", "leg",
    "knee",     "foot",     "ankle",    "toe",      "toebase",  "hip",     "thigh", "calf",
    "shin",     "clavicle", "collar",   "humerus",  "radius",   "femur",   "tibia", "toes",
    "shldr",    "upperarm", "lowerarm", "upperleg", "lowerleg", "fingers", "thumb", "hipjoint"};

using core::ascii_lower;

bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}
bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

// Words of a name: split at ' ', '_', '-', '.', and camelCase boundaries
// ("LeftUpLeg" → Left Up Leg, "LHand" → L Hand, "lThigh" → l Thigh).
std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> words;
  std::string cur;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ' || c == '_' || c == '-' || c == '.' || c == '\t') {
      if (!cur.empty()) words.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    if (!cur.empty() && is_upper(c)) {
      char prev = s[i - 1];
      bool next_lower = i + 1 < s.size() && is_lower(s[i + 1]);
      if (is_lower(prev) || is_digit(prev) || (is_upper(prev) && next_lower)) {
        words.push_back(std::move(cur));
        cur.clear();
      }
    }
    cur += ascii_lower(c);
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

// "bip01", "bip001", "character1", "mixamorig1": a rig prefix word.
bool is_prefix_word(const std::string& w) {
  auto letters_then_digits = [&](std::string_view stem, bool digits_required) {
    if (w.size() < stem.size() || w.compare(0, stem.size(), stem) != 0) return false;
    if (digits_required && w.size() == stem.size()) return false;
    return std::all_of(w.begin() + static_cast<std::ptrdiff_t>(stem.size()), w.end(), is_digit);
  };
  return letters_then_digits("bip", true) || letters_then_digits("character", false) ||
         letters_then_digits("mixamorig", false) || w == "joint" || w == "jnt" || w == "def";
}

bool is_sided_part(std::string_view p) {
  return std::find(std::begin(kSidedParts), std::end(kSidedParts), p) != std::end(kSidedParts);
}

std::string_view fold_part(std::string_view part) {
  for (const auto& s : kPartSynonyms)
    if (s.from == part) return s.to;
  return part;
}

}  // namespace

std::string_view point_name(std::size_t i) {
  return i < kPointCount ? kPointNames[i] : std::string_view{};
}
std::string_view angle_name(std::size_t i) {
  return i < kAngleCount ? kAngleNames[i] : std::string_view{};
}

std::optional<std::size_t> point_index(std::string_view s) {
  for (std::size_t i = 0; i < kPointCount; ++i)
    if (kPointNames[i] == s) return i;
  if (!s.empty() && s.size() <= 2 && std::all_of(s.begin(), s.end(), is_digit)) {
    if (s.size() == 2 && s[0] == '0') return std::nullopt;
    std::size_t v = 0;
    for (char c : s) v = v * 10 + static_cast<std::size_t>(c - '0');
    if (v < kPointCount) return v;
  }
  return std::nullopt;
}

bool is_estimated_point(std::size_t i) {
  return (i >= 1 && i <= 10) || (i >= 17 && i <= 22) || i == 29 || i == 30;
}

const char* point_source_name(PointSource s) {
  switch (s) {
    case PointSource::kMapped:
      return "mapped";
    case PointSource::kMissing:
      return "missing";
    case PointSource::kEstimated:
      return "estimated";
  }
  return "?";
}

std::string normalise_joint_name(std::string_view name) {
  // Namespaces: "mixamorig:Hips", "Character|Hips".
  if (auto p = name.find_last_of(":|"); p != std::string_view::npos) name.remove_prefix(p + 1);
  std::vector<std::string> w = split_words(name);
  while (w.size() > 1 && is_prefix_word(w.front())) w.erase(w.begin());
  std::string side;
  auto side_of = [](const std::string& s) -> std::string {
    if (s == "l" || s == "left") return "left";
    if (s == "r" || s == "right") return "right";
    return {};
  };
  if (w.size() > 1 && !(side = side_of(w.front())).empty()) {
    w.erase(w.begin());
  } else if (w.size() > 1 && !(side = side_of(w.back())).empty()) {
    w.pop_back();
  } else if (!w.empty()) {
    std::string& f = w.front();
    if (f.size() > 4 && f.compare(0, 4, "left") == 0) {
      side = "left";
      f.erase(0, 4);
    } else if (f.size() > 5 && f.compare(0, 5, "right") == 0) {
      side = "right";
      f.erase(0, 5);
    } else if (w.size() == 1 && f.size() > 1 && (f[0] == 'l' || f[0] == 'r') &&
               is_sided_part(std::string_view(f).substr(1))) {
      side = f[0] == 'l' ? "left" : "right";
      f.erase(0, 1);
    }
  }
  std::string part;
  for (const auto& x : w) part += x;
  return side + std::string(fold_part(part));
}

JointTable default_joint_table() {
  JointTable t;
  for (const auto& row : kDefaultTable)
    for (auto n : row.names) t.candidates[row.point].emplace_back(n);
  return t;
}

core::Result<JointTable> apply_joint_map(JointTable table, std::string_view json_text) {
  auto parsed = core::parse_json_strict(json_text);
  if (!parsed) return parsed.error();
  const core::Json& j = *parsed;
  auto fail = [](const std::string& ptr, const std::string& msg) {
    return core::error_at_pointer(codes::JOINT_MAP, ptr + ": " + msg, ptr);
  };
  if (!j.is_object())
    return core::error_at_pointer(
        codes::JOINT_MAP,
        "the joint map must be a JSON object, found " + std::string(core::json_type_name(j)), "");
  constexpr std::size_t kMaxNames = 64;
  std::array<std::vector<std::string>, kPointCount> added;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string ptr = core::json_pointer_join("", it.key());
    auto idx = point_index(it.key());
    if (!idx)
      return fail(ptr, "not a MediaPipe point name nor an index 0-32; the names: " +
                           core::format_name_list(kPointNames));
    if (!it.value().is_array()) return fail(ptr, "expected an array of joint names");
    if (it.value().size() > kMaxNames) return fail(ptr, "more than 64 joint names");
    if (!added[*idx].empty()) return fail(ptr, "point given twice (name and index)");
    std::size_t k = 0;
    for (const auto& v : it.value()) {
      const std::string eptr = core::json_pointer_join(ptr, k++);
      if (!v.is_string()) return fail(eptr, "expected a joint name string");
      const auto& s = v.get_ref<const std::string&>();
      if (s.empty() || s.size() > 256) return fail(eptr, "joint name must be 1 to 256 bytes");
      added[*idx].push_back(s);
    }
    if (added[*idx].empty()) added[*idx].push_back({});  // marks "given" for the duplicate check
  }
  for (std::size_t i = 0; i < kPointCount; ++i) {
    std::vector<std::string> merged;
    for (auto& s : added[i])
      if (!s.empty()) merged.push_back(std::move(s));
    for (auto& s : table.candidates[i]) merged.push_back(std::move(s));
    table.candidates[i] = std::move(merged);
  }
  return table;
}

JointMapping map_joints(std::span<const BvhJoint> joints, const JointTable& table) {
  std::vector<std::string> lower_names, norm_names;
  lower_names.reserve(joints.size());
  norm_names.reserve(joints.size());
  for (const auto& j : joints) {
    lower_names.push_back(j.end_site ? std::string() : to_lower(j.name));
    norm_names.push_back(j.end_site ? std::string() : normalise_joint_name(j.name));
  }
  auto find = [&](const std::vector<std::string>& names, const std::string& key) -> int {
    if (key.empty()) return -1;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == key) return static_cast<int>(i);
    return -1;
  };
  JointMapping m;
  for (std::size_t p = 0; p < kPointCount; ++p) {
    const auto& cands = table.candidates[p];
    PointMapping pm;
    pm.source =
        cands.empty() && is_estimated_point(p) ? PointSource::kEstimated : PointSource::kMissing;
    for (const auto& c : cands) {
      int j = find(lower_names, to_lower(c));
      if (j < 0) j = find(norm_names, normalise_joint_name(c));
      if (j >= 0) {
        pm = PointMapping{PointSource::kMapped, j};
        break;
      }
    }
    m.points[p] = pm;
  }
  const bool hips_mapped =
      m.points[23].source == PointSource::kMapped && m.points[24].source == PointSource::kMapped;
  if (!hips_mapped) {
    for (const char* name : {"hips", "hip", "pelvis"}) {
      m.pelvis_joint = find(norm_names, name);
      if (m.pelvis_joint >= 0) break;
    }
    if (m.pelvis_joint < 0 && !joints.empty()) m.pelvis_joint = 0;  // the first ROOT
  }
  return m;
}

// ---- pose ---------------------------------------------------------------------

namespace {

using core::add;
using core::scale;
using core::sub;

Vec3 mid(const Vec3& a, const Vec3& b) {
  return scale(add(a, b), 0.5);
}
double norm(const Vec3& a) {
  return core::length(a);
}
Vec3 unit_or(const Vec3& a, const Vec3& fallback) {
  double n = norm(a);
  return n > 1e-9 ? scale(a, 1.0 / n) : fallback;
}

constexpr int kShoulderCentre = -2;  // virtual topology node (see parent_of)

// Parent of each point in the topology (skeleton-topology.md §2):
// -1 = pelvis (the origin), -2 = shoulder centre (midpoint of 11 and 12).
constexpr std::array<int, kPointCount> kParent = {
    -2, 0,  0,  0,  0,  0,  0, 0, 0, 0, 0,  // 0 nose, 1-10 face
    -1, -1, 11, 12, 13, 14,                 // shoulders, elbows, wrists
    15, 16, 15, 16, 15, 16,                 // pinky, index, thumb
    -1, -1, 23, 24, 25, 26,                 // hips, knees, ankles
    27, 28, 27, 28};                        // heels, foot index

// Resolution order: every parent before its children.
constexpr std::array<std::size_t, kPointCount> kOrder = {
    11, 12, 23, 24, 13, 14, 15, 16, 25, 26, 27, 28, 31, 32, 0,  1, 2,
    3,  4,  5,  6,  7,  8,  9,  10, 17, 18, 19, 20, 21, 22, 29, 30};

}  // namespace

double angle_cosine(const Vec3& a, const Vec3& b) {
  const double na = norm(a), nb = norm(b);
  if (!(na > 1e-9) || !(nb > 1e-9)) return 0.0;
  double c = core::dot(a, b) / (na * nb);
  if (!std::isfinite(c)) return 0.0;  // overflow of huge coordinates
  return std::clamp(c, -1.0, 1.0);
}

double projection_scale(double max_abs) {
  return max_abs > 0 ? 0.35 / max_abs : 1.0;
}

Keypoint project(const Keypoint& p, double s) {
  return Keypoint{std::clamp(0.5 + p.x * s, 0.15, 0.85), std::clamp(0.5 - p.y * s, 0.15, 0.85),
                  std::clamp(-p.z * s, -0.35, 0.35), p.confidence};
}

core::Status PoseJob::validate() const {
  if (mapping == nullptr || points.size() != kPointCount || angles.size() != kAngleCount)
    return core::make_error(codes::MOTION_INTERNAL,
                            "pose job: a joint mapping, 33 points and 9 angles are needed");
  const auto n = static_cast<int>(world_positions.size());
  for (std::size_t i = 0; i < mapping->points.size(); ++i) {
    const PointMapping& pm = mapping->points[i];
    if (pm.source == PointSource::kMapped && (pm.joint < 0 || pm.joint >= n))
      return core::make_error(codes::MOTION_INTERNAL,
                              "pose job: point " + std::to_string(i) + " maps to joint " +
                                  std::to_string(pm.joint) + " of " + std::to_string(n));
  }
  if (mapping->pelvis_joint >= n)
    return core::make_error(codes::MOTION_INTERNAL, "pose job: the pelvis is joint " +
                                                        std::to_string(mapping->pelvis_joint) +
                                                        " of " + std::to_string(n));
  return core::Ok{};
}

core::Status PoseJob::run(const core::RunOptions& /*options*/) const {
  const JointMapping& m = *mapping;
  auto world = [&](int j) -> Vec3 {
    const Vec3& w = world_positions[static_cast<std::size_t>(j)];
    // Z-up sources: rotate −90° about X, (x, y, z) → (x, z, −y).
    return up == UpAxis::kZ ? Vec3{w[0], w[2], -w[1]} : w;
  };
  std::array<Vec3, kPointCount> p{};
  Vec3 pelvis{};
  if (m.pelvis_joint >= 0) {
    pelvis = world(m.pelvis_joint);
  } else {
    pelvis = mid(world(m.points[23].joint), world(m.points[24].joint));
  }
  Vec3 shoulder_centre{};
  auto parent_pos = [&](std::size_t i) -> Vec3 {
    int par = kParent[i];
    if (par == -1) return Vec3{};
    if (par == kShoulderCentre) return shoulder_centre;
    return p[static_cast<std::size_t>(par)];
  };
  for (std::size_t i : kOrder) {
    if (i == 0) shoulder_centre = mid(p[11], p[12]);  // 11 and 12 are resolved first
    const PointMapping& pm = m.points[i];
    double conf = 0.0;
    if (pm.source == PointSource::kMapped) {
      p[i] = sub(world(pm.joint), pelvis);
      conf = 1.0;
    } else if (pm.source == PointSource::kEstimated) {
      p[i] = parent_pos(i);  // refined below, once all parents are known
      conf = 0.5;
    } else {
      p[i] = parent_pos(i);  // missing: nearest available parent
    }
    points[i] = Keypoint{0, 0, 0, conf};
  }

  // Estimation rules (skeleton-topology.md §3).
  auto est = [&](std::size_t i) { return m.points[i].source == PointSource::kEstimated; };
  {
    const Vec3 nose = p[0];
    const Vec3 across = sub(p[11], p[12]);  // towards the subject's left
    double width = norm(across);
    if (!(width > 1e-9)) width = norm(sub(nose, shoulder_centre));
    const Vec3 r = unit_or(across, Vec3{1, 0, 0});
    const Vec3 u = unit_or(sub(nose, shoulder_centre), Vec3{0, 1, 0});
    auto face = [&](std::size_t i, double up_f, double side_f) {
      if (est(i)) p[i] = add(nose, add(scale(u, up_f * width), scale(r, side_f * width)));
    };
    face(1, 0.10, 0.05);
    face(2, 0.10, 0.10);
    face(3, 0.10, 0.15);
    face(4, 0.10, -0.05);
    face(5, 0.10, -0.10);
    face(6, 0.10, -0.15);
    face(7, 0.05, 0.20);
    face(8, 0.05, -0.20);
    face(9, -0.08, 0.05);
    face(10, -0.08, -0.05);
  }
  for (std::size_t side = 0; side < 2; ++side) {
    const Vec3 wrist = p[15 + side];
    const Vec3 forearm = sub(wrist, p[13 + side]);
    if (est(17 + side)) p[17 + side] = add(wrist, scale(forearm, 0.35));  // pinky
    if (est(19 + side)) p[19 + side] = add(wrist, scale(forearm, 0.40));  // index
    if (est(21 + side)) p[21 + side] = add(wrist, scale(forearm, 0.25));  // thumb
    if (est(29 + side)) {
      const Vec3 ankle = p[27 + side];
      const Vec3 foot = sub(p[31 + side], ankle);
      // Behind the ankle, against the horizontal foot direction, at toe height.
      p[29 + side] = {ankle[0] - 0.35 * foot[0], ankle[1] + foot[1], ankle[2] - 0.35 * foot[2]};
    }
  }
  for (std::size_t i = 0; i < kPointCount; ++i) {
    points[i].x = p[i][0];
    points[i].y = p[i][1];
    points[i].z = p[i][2];
  }

  joint_angles(p, angles);
  return core::Ok{};
}

void joint_angles(std::span<const Vec3> p, std::span<double> angles) {
  assert(p.size() == kPointCount && angles.size() == kAngleCount);
  // §5: cosine at vertex B between B→A and B→C.
  auto at = [&](std::size_t b, std::size_t a, std::size_t c) {
    return angle_cosine(sub(p[a], p[b]), sub(p[c], p[b]));
  };
  angles[0] = at(11, 13, 23);
  angles[1] = at(12, 14, 24);
  angles[2] = at(13, 11, 15);
  angles[3] = at(14, 12, 16);
  angles[4] = at(23, 11, 25);
  angles[5] = at(24, 12, 26);
  angles[6] = at(25, 23, 27);
  angles[7] = at(26, 24, 28);
  angles[8] = angle_cosine(sub(mid(p[11], p[12]), mid(p[23], p[24])), Vec3{0, 1, 0});
}

}  // namespace charkit::motion
