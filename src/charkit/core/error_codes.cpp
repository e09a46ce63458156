#include "charkit/core/error_codes.h"

#include <array>

#include "charkit/core/result.h"

namespace charkit::core {

namespace {

// Markdown table cells: '|' ends a cell and a newline ends the row.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

const ErrorCodeInfo* find_error_code(std::string_view code, std::span<const ErrorCodeInfo> table) {
  for (const auto& info : table) {
    if (info.code == code) return &info;
  }
  return nullptr;
}

std::string error_codes_markdown(std::span<const ErrorCodeInfo> table) {
  std::string md =
      "# Error codes\n"
      "\n"
      "<!-- Generated from the declarations: do not edit by hand. A code is declared once,\n"
      "     in src/charkit/<module>/error_codes.def (apps/charkit/error_codes.def for the\n"
      "     charkit program); after changing one, regenerate this file with\n"
      "         build/dev/apps/charkit/charkit errors --markdown > docs/errors.md\n"
      "     The test errors.declared fails when this file and the declarations differ. -->\n"
      "\n"
      "Every error, warning and notice charkit reports carries a stable code. In text\n"
      "output it follows the severity (`FILE: LOCATION: error CODE: message`); in JSON it\n"
      "is the `code` member. The code names the kind of problem; the message names the\n"
      "instance (which value, which entry). `charkit errors CODE` prints one entry;\n"
      "`charkit errors --json` lists them all. Codes from the BEM specification keep\n"
      "the specification's spelling.\n"
      "\n"
      "Library users: a program that branches on a code compares it with the declared\n"
      "constant, `e.code == store::codes::STORE_TOO_LARGE` (`charkit/<module>/error_codes.h`),\n"
      "so a misspelt code does not compile; `<module>::codes::kAll` is the module's\n"
      "table. Contributors: a new code is one `CHARKIT_ERROR(CODE, \"meaning\", \"what the\n"
      "user can do\")` line in its module's `error_codes.def`; the test `errors.declared`\n"
      "(tests/errors/check_error_codes.py) fails on a code-shaped string literal in src/\n"
      "or apps/ that is not declared, on a code declared twice, on a code compared with a\n"
      "string literal, and when this file differs from the declarations.\n";
  std::string_view module;
  for (const auto& info : table) {
    if (info.module != module) {
      module = info.module;
      md += "\n## ";
      md += module;
      md += "\n\n| Code | Meaning | What you can do |\n|---|---|---|\n";
    }
    md +=
        "| `" + cell(info.code) + "` | " + cell(info.meaning) + " | " + cell(info.remedy) + " |\n";
  }
  return md;
}

bool is_io_error(const Error& e) {
  return e.code.starts_with("IO_");
}

bool is_isolation_error(const Error& e) {
  return e.code.starts_with("ISOLATED_");
}

}  // namespace charkit::core
