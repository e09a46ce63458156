// The two settings parsers (§6 options, §10 parameters) and normalisation on
// a fixed small model, then a plan of the result. Input: the options string,
// a newline, the parameters string (no newline: options only). Seeds in
// fuzz/corpus/bem_settings/. Never crashes; a successful parse always gives
// settings that plan and round-trip through the normalised strings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "charkit/bem/model.h"
#include "charkit/bem/plan.h"
#include "charkit/bem/settings.h"

namespace {

using namespace charkit::bem;

Model make_model(bool v10) {
  Model m;
  m.minor = v10 ? 0 : 3;
  m.appearance_structure = v10;
  m.payload_sizes.assign(8, 64);
  if (v10) {
    m.groups.push_back(
        Group{"appearance", "appearance", {"outfit-a", "outfit-b"}, 1, std::nullopt});
  } else {
    m.groups.push_back(Group{"outfit", "Outfit", {"a", "b"}, 0, std::nullopt});
    m.groups.push_back(Group{"colour", "Colour", {"red", "blue"}, 0, std::nullopt});
    m.groups.push_back(Group{"part", "Part", {"on", "off"}, 0, Condition::eq(0, 1)});
    Condition both;
    both.op = Condition::Op::kAll;
    both.operands = {Condition::eq(0, 0), Condition::eq(1, 1)};
    Condition no;
    no.op = Condition::Op::kNot;
    no.operands = {both};
    m.constraints.push_back(no);
  }
  Mesh mesh;
  mesh.vertex_count = 3;
  mesh.streams = {VertexStream{12, 0}, VertexStream{8, 1}, VertexStream{4, 2}};
  Draw d;
  d.indices = 3;
  d.count = 3;
  mesh.draws.push_back(d);
  if (!v10) d.when = Condition::eq(2, 1);
  d.indices = 4;
  mesh.draws.push_back(d);
  m.meshes.push_back(mesh);
  Component c;
  Candidate keep;
  keep.when = Condition::eq(0, 0);
  Candidate replace;
  replace.when = Condition::eq(0, 1);
  replace.op = Operation::kReplace;
  c.candidates = {keep, replace};
  m.components.push_back(c);
  Parameter body{"body", "Body", 0, 1000, 0, 0, 1, std::nullopt};
  Parameter slim{"slim", "Slim", 0, 1000, 500, 500, 250, Condition::eq(1, 1)};
  m.parameters = {body, slim};
  Deformation def;
  def.parameter = 1;
  def.frames = {DeformationFrame{0, false, 5, 1}, DeformationFrame{500, true, 0, 0},
                DeformationFrame{1000, false, 6, 1}};
  m.deformations.push_back(def);
  return m;
}

void check(const Model& m, std::string_view options, std::string_view parameters) {
  auto s = parse_settings(m, options, parameters);
  if (!s.ok()) return;
  // The normalised strings parse again, without warnings, to the same settings.
  const std::string o = format_options(m, *s);
  const std::string p = format_parameters(m, *s);
  auto again = parse_settings(m, o, p);
  if (!again.ok() || !again->warnings.empty() || again->saved != s->saved ||
      again->saved_ticks != s->saved_ticks)
    std::abort();
  auto plan = make_plan(m, *s);
  (void)plan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Model v13 = make_model(false);
  static const Model v10 = make_model(true);
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = in.find('\n');
  std::string_view options = in.substr(0, nl);
  std::string_view parameters =
      nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  check(v13, options, parameters);
  check(v10, options, parameters);
  return 0;
}
