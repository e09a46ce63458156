// §6 condition syntax, shared by option groups (available_when), component
// rules, selection constraints, draws (when), texture slots and parameters:
//   true | false | {"eq":[group, choice]} | {"all":[…]} | {"any":[…]} | {"not":cond}
// Depth ≤ 16 (Q2: a leaf counts as one level, like the root of the JSON
// nesting limit), all/any with 1..32 operands.
#include "charkit/bem/detail/condition_eval.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

namespace {

constexpr int kMaxDepth = 16;
constexpr std::size_t kMaxOperands = 32;

using core::json_pointer_join;

class ConditionChecker {
 public:
  ConditionChecker(Context& ctx, int group_limit, const char* section)
      : ctx_(ctx), group_limit_(group_limit), section_(section) {}

  bool check(const Json& c, const std::string& ptr, int depth) {
    if (depth > kMaxDepth) {
      ctx_.error(codes::BEM_CONDITION_DEPTH, section_, ptr,
                 "condition is nested deeper than 16 levels (a leaf counts as one level)");
      return false;
    }
    if (c.is_boolean()) return true;
    if (!c.is_object() || c.size() != 1) {
      ctx_.error(codes::BEM_CONDITION_SYNTAX, section_, ptr,
                 std::string("a condition is true, false or an object with exactly one of "
                             "eq/all/any/not; found ") +
                     (c.is_object() ? "an object with " + std::to_string(c.size()) + " keys"
                                    : std::string(core::json_type_name(c))));
      return false;
    }
    const std::string& op = c.begin().key();
    const Json& arg = c.begin().value();
    std::string aptr = json_pointer_join(ptr, op);
    if (op == "eq") return check_eq(arg, aptr);
    if (op == "not") return check(arg, aptr, depth + 1);
    if (op == "all" || op == "any") {
      if (!arg.is_array() || arg.empty() || arg.size() > kMaxOperands) {
        ctx_.error(codes::BEM_CONDITION_OPERANDS, section_, aptr,
                   "\"" + op + "\" takes an array of 1..32 conditions, found " +
                       (arg.is_array() ? std::to_string(arg.size()) + " entries"
                                       : std::string(core::json_type_name(arg))));
        return false;
      }
      bool ok = true;
      for (std::size_t i = 0; i < arg.size(); ++i)
        ok = check(arg[i], json_pointer_join(aptr, i), depth + 1) && ok;
      return ok;
    }
    ctx_.error(codes::BEM_CONDITION_SYNTAX, section_, ptr,
               "unknown condition operator \"" + op.substr(0, 64) +
                   "\"; allowed are eq, all, any and not");
    return false;
  }

 private:
  bool check_eq(const Json& arg, const std::string& ptr) {
    if (!arg.is_array() || arg.size() != 2 || !arg[0].is_string() || !arg[1].is_string()) {
      ctx_.error(codes::BEM_CONDITION_SYNTAX, section_, ptr,
                 "\"eq\" takes [group id, choice id] (two strings)");
      return false;
    }
    const auto& group = arg[0].get_ref<const std::string&>();
    const auto& choice = arg[1].get_ref<const std::string&>();
    int gi = find_group(ctx_, group);
    if (gi < 0) {
      ctx_.error(codes::BEM_CONDITION_UNKNOWN_GROUP, section_, json_pointer_join(ptr, 0),
                 "condition refers to option group \"" + group.substr(0, 120) +
                     "\", which does not exist");
      return false;
    }
    if (group_limit_ >= 0 && gi >= group_limit_) {
      ctx_.error(codes::BEM_CONDITION_GROUP_ORDER, "§6", json_pointer_join(ptr, 0),
                 "available_when may only refer to groups listed before this one; \"" + group +
                     "\" is not");
      return false;
    }
    const auto& choices = ctx_.groups[static_cast<std::size_t>(gi)].second;
    if (std::find(choices.begin(), choices.end(), choice) == choices.end()) {
      ctx_.error(codes::BEM_CONDITION_UNKNOWN_CHOICE, section_, json_pointer_join(ptr, 1),
                 "option group \"" + group + "\" has no choice \"" + choice.substr(0, 120) + "\"");
      return false;
    }
    return true;
  }

  Context& ctx_;
  int group_limit_;
  const char* section_;
};

}  // namespace

int find_group(const Context& ctx, const std::string& id) {
  if (id.empty()) return -1;
  for (std::size_t i = 0; i < ctx.groups.size(); ++i)
    if (ctx.groups[i].first == id) return static_cast<int>(i);
  return -1;
}

bool check_condition(Context& ctx, const Json& cond, const std::string& ptr, int group_limit,
                     const char* section) {
  ConditionChecker checker(ctx, group_limit, section);
  return checker.check(cond, ptr, 1);
}

bool eval_condition(const Json& cond, const Selection& sel, const Context& ctx) {
  if (cond.is_boolean()) return cond.get<bool>();
  if (!cond.is_object() || cond.size() != 1) return false;
  const std::string& op = cond.begin().key();
  const Json& arg = cond.begin().value();
  if (op == "eq") {
    if (!arg.is_array() || arg.size() != 2 || !arg[0].is_string() || !arg[1].is_string())
      return false;
    int gi = find_group(ctx, arg[0].get_ref<const std::string&>());
    if (gi < 0 || static_cast<std::size_t>(gi) >= sel.size()) return false;
    const auto& v = sel[static_cast<std::size_t>(gi)];
    return v && *v == arg[1].get_ref<const std::string&>();
  }
  if (op == "not") return !eval_condition(arg, sel, ctx);
  if (!arg.is_array()) return false;
  if (op == "all") {
    for (const auto& a : arg)
      if (!eval_condition(a, sel, ctx)) return false;
    return true;
  }
  if (op == "any") {
    for (const auto& a : arg)
      if (eval_condition(a, sel, ctx)) return true;
    return false;
  }
  return false;
}

}  // namespace charkit::bem
