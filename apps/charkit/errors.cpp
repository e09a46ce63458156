// `charkit errors [CODE]`: the declared error codes (src/charkit/*/error_codes.def
// and this program's error_codes.def) with their meaning and what the user
// can do; `--markdown` writes docs/errors.md.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/json_text.h"
#include "commands.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

constexpr core::ErrorCodeInfo kCliCodes[] = {
#define CHARKIT_ERROR(code, meaning, remedy) {#code, "cli", meaning, remedy},
#include "error_codes.def"
#undef CHARKIT_ERROR
};

/// Every declared code: the libraries' (core::library_error_codes), then this program's.
std::vector<core::ErrorCodeInfo> all_error_codes() {
  const auto lib = core::library_error_codes();
  std::vector<core::ErrorCodeInfo> all(lib.begin(), lib.end());
  all.insert(all.end(), std::begin(kCliCodes), std::end(kCliCodes));
  return all;
}

struct ErrorsArgs {
  std::string code;
  bool json = false;
  bool markdown = false;
};

Json info_json(const core::ErrorCodeInfo& i) {
  return Json{{"code", i.code}, {"module", i.module}, {"meaning", i.meaning}, {"remedy", i.remedy}};
}

int run_errors(const ErrorsArgs& a) {
  const std::vector<core::ErrorCodeInfo> table = all_error_codes();
  if (a.markdown) {
    std::cout << core::error_codes_markdown(table);
    return kExitOk;
  }
  if (!a.code.empty()) {
    const core::ErrorCodeInfo* i = core::find_error_code(a.code, table);
    if (!i) {
      const std::string msg =
          "no error code '" + a.code + "' is declared (`charkit errors` lists them)";
      if (a.json) {
        std::cout << core::dump_json(
                         Json{{"error", {{"code", "ERRORS_UNKNOWN_CODE"}, {"message", msg}}}}, 2)
                  << "\n";
      }
      std::cerr << "charkit: error ERRORS_UNKNOWN_CODE: " << printable(msg) << "\n";
      return kExitUsage;
    }
    if (a.json) {
      std::cout << core::dump_json(info_json(*i), 2) << "\n";
    } else {
      std::cout << i->code << " (" << i->module << ")\n  " << i->meaning
                << "\n  What you can do: " << i->remedy << "\n";
    }
    return kExitOk;
  }
  if (a.json) {
    Json arr = Json::array();
    for (const auto& i : table) arr.push_back(info_json(i));
    std::cout << core::dump_json(Json{{"codes", arr}}, 2) << "\n";
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
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->add_flag("--markdown", a->markdown,
                "Print docs/errors.md (every code, one table per module)");
  cmd->footer("Exit status: 0 listed, 2 no such code.");
  cmd->callback([a, &exit_code] { exit_code = run_errors(*a); });
}

}  // namespace charkit::app
