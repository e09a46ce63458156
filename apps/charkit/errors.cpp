// `charkit errors [CODE]`: the declared error codes (src/charkit/*/error_codes.def
// and this program's error_codes.def) with their meaning and what the user
// can do; `--markdown` writes docs/errors.md.
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "charkit/bem/error_codes.h"
#include "charkit/capi/error_codes.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/deform/error_codes.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/gpu/error_codes.h"
#include "charkit/motion/error_codes.h"
#include "charkit/render/error_codes.h"
#include "charkit/scene/error_codes.h"
#include "charkit/server/error_codes.h"
#include "charkit/store/error_codes.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"

namespace charkit::app {
namespace {

using core::Json;

// A code declared twice, in one module or in two, is a duplicate enumerator
// here, so the program fails to compile (tests/errors/check_error_codes.py
// checks the same for every .def file).
#define CHARKIT_ERROR(code, meaning, remedy) code,
enum class EveryDeclaredCode {
#include "charkit/bem/error_codes.def"
#include "charkit/capi/error_codes.def"
#include "charkit/core/error_codes.def"
#include "charkit/deform/error_codes.def"
#include "charkit/deformer/error_codes.def"
#include "charkit/gpu/error_codes.def"
#include "charkit/motion/error_codes.def"
#include "charkit/render/error_codes.def"
#include "charkit/scene/error_codes.def"
#include "charkit/server/error_codes.def"
#include "charkit/store/error_codes.def"
#include "error_codes.def"
};
#undef CHARKIT_ERROR

/// Every declared code: each library module's table, lowest layer first
/// (docs/architecture.md), then the C API's and this program's. The list is
/// assembled here, above every module, so that no module knows the ones
/// above it.
std::vector<core::ErrorCodeInfo> all_error_codes() {
  const std::span<const core::ErrorCodeInfo> tables[] = {
      core::codes::kAll,   scene::codes::kAll,  gpu::codes::kAll,      deform::codes::kAll,
      render::codes::kAll, motion::codes::kAll, deformer::codes::kAll, bem::codes::kAll,
      store::codes::kAll,  server::codes::kAll, capi::codes::kAll,     codes::kAll};
  std::vector<core::ErrorCodeInfo> all;
  for (const auto& t : tables) all.insert(all.end(), t.begin(), t.end());
  return all;
}

struct ErrorsArgs {
  std::string code;
  bool markdown = false;
};

Json info_json(const core::ErrorCodeInfo& i) {
  return Json{{"code", i.code}, {"module", i.module}, {"meaning", i.meaning}, {"remedy", i.remedy}};
}

// Output by the one CLI convention (cli_output.h): with --json the result is
// print_json()'s document, an unknown code the {ok, errors} document.
int run_errors(const ErrorsArgs& a) {
  const std::vector<core::ErrorCodeInfo> table = all_error_codes();
  const bool json = output_mode().json;
  if (a.markdown) {
    set_stdout_is_data();  // the markdown is the output, even with --json
    std::cout << core::error_codes_markdown(table);
    return kExitOk;
  }
  if (!a.code.empty()) {
    const core::ErrorCodeInfo* i = core::find_error_code(a.code, table);
    if (!i)
      return report_error(
          "", codes::ERRORS_UNKNOWN_CODE,
          "no error code '" + a.code + "' is declared (`charkit errors` lists them)", kExitUsage);
    if (json) {
      print_json(info_json(*i));
    } else {
      std::cout << i->code << " (" << i->module << ")\n  " << i->meaning
                << "\n  What you can do: " << i->remedy << "\n";
    }
    return kExitOk;
  }
  if (json) {
    Json arr = Json::array();
    for (const auto& i : table) arr.push_back(info_json(i));
    print_json(Json{{"codes", arr}});
    return kExitOk;
  }
  for (const auto& i : table) std::cout << i.code << "\t" << i.module << "\t" << i.meaning << "\n";
  return kExitOk;
}

}  // namespace

void add_errors_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ErrorsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "errors", "List the error codes charkit reports, with their meaning and what you can do");
  cmd->add_option("CODE", a->code, "Explain this one code (e.g. BEM_HEADER_MAGIC)");
  cmd->add_flag("--markdown", a->markdown,
                "Print docs/errors.md (every code, one table per module)");
  cmd->footer("Exit status: 0 listed, 2 no such code.");
  cmd->callback([a, &exit_code] { exit_code = run_errors(*a); });
}

}  // namespace charkit::app
