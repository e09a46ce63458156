// `charkit bem convert` (binary ⇄ ZIP, folders in) and `charkit bem unpack`
// (package → folder). The work is in the library (bem/writer.h,
// bem/folder.h); this file maps files to bytes and results to text or JSON.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "charkit/bem/error_codes.h"
#include "charkit/bem/folder.h"
#include "charkit/bem/writer.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "cli_output.h"
#include "commands.h"
#include "output_file.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

/// I/O problems are exit 2; anything about the package's content is exit 1.
int exit_for(const core::Error& e) {
  return core::is_io_error(e) ? kExitUsage : kExitInvalid;
}

int fail(const std::string& subject, const core::Error& e, bool json) {
  if (json)
    print_json(Json{
        {"uri", subject},
        {"error",
         Json{{"code", e.code}, {"message", e.message}, {"location", e.location.to_string()}}}});
  return report_error(subject, e, exit_for(e));
}

// ---- convert ----------------------------------------------------------------

struct ConvertArgs {
  std::string in, out, to;
  int level = 9;
  unsigned threads = 0;
  bool format_version = false;
  bool keep_unreferenced = false;
  bool stored = false;
  bool json = false;
  bool skip_validation = false;
  std::optional<int> minor;
};

bool ends_with_zip(const std::string& path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".zip";
}

int run_convert(const ConvertArgs& a) {
  // The input: a package file (memory-mapped) or a package folder.
  std::vector<std::uint8_t> folder_bytes;
  std::optional<core::MappedFile> mapped;  // constructed in place: no move assignment
  core::Bytes input;
  if (bem::is_package_folder(a.in)) {
    auto r = bem::read_package_folder(a.in);
    if (!r) return fail(a.in, r.error(), a.json);
    folder_bytes = std::move(*r);
    input = folder_bytes;
  } else {
    auto r = core::MappedFile::open(a.in);
    if (!r) return fail(a.in, r.error(), a.json);
    mapped.emplace(std::move(*r));
    input = mapped->bytes();
  }
  auto content = bem::read_package_content(input);
  if (!content) return fail(a.in, content.error(), a.json);

  const bool zip = a.to.empty() ? ends_with_zip(a.out) : a.to == "zip";
  bem::WriteOptions options;
  options.zstd_level = a.level;
  options.deflate_level = std::min(a.level, 9);
  options.threads = a.threads;
  options.minor = a.minor;
  options.format_version = a.format_version;
  options.keep_unreferenced = a.keep_unreferenced;
  options.zip_deflate = !a.stored;
  options.validate.skip_validation = a.skip_validation;
  core::Report report;
  auto written = zip ? bem::write_zip(*content, options, &report)
                     : bem::write_binary(*content, options, &report);
  if (!written) {
    // Refused content: the validator's errors say why.
    report_issues(a.in, report);
    return fail(a.in, written.error(), a.json);
  }
  if (auto st = write_output_file(a.out, written->bytes); !st)
    return fail(a.out, st.error(), a.json);

  const bem::WriteStats& s = written->stats;
  const std::string version = "1." + std::to_string(s.minor);
  if (a.json) {
    Json j{{"uri", a.out},
           {"ok", true},
           {"container", zip ? "zip" : "binary"},
           {"version", version},
           {"neededVersion", "1." + std::to_string(s.needed_minor)},
           {"payloadsIn", s.payloads_in},
           {"payloadsOut", s.payloads_out},
           {"deduplicated", s.deduplicated},
           {"unreferencedDropped", s.unreferenced},
           {zip ? "stored" : "raw", s.uncompressed},
           {zip ? "deflate" : "zstd", s.compressed},
           {"bytesIn", input.size()},
           {"bytesOut", s.file_bytes},
           {"issues", Json::parse(report.to_json_issues())}};
    print_json(std::move(j));
  } else {
    for (const auto& i : report.issues())
      if (i.severity == core::Severity::kWarning)
        report_warning(a.in, i.code, i.message, i.location.to_string());
    std::cout << printable(a.out) << ": BEM " << version << " " << (zip ? "ZIP" : "binary") << ", "
              << s.payloads_out << " payloads (" << s.deduplicated << " deduplicated, "
              << s.unreferenced << " unreferenced dropped), " << s.uncompressed
              << (zip ? " stored + " : " raw + ") << s.compressed << (zip ? " deflate" : " zstd")
              << ", " << input.size() << " -> " << s.file_bytes << " bytes\n";
  }
  return kExitOk;
}

// ---- unpack -----------------------------------------------------------------

int run_unpack(const std::string& file, const std::string& dir, bool force, bool json) {
  auto mapped = core::MappedFile::open(file);
  if (!mapped) return fail(file, mapped.error(), json);
  bem::UnpackOptions options;
  options.force = force;
  auto r = bem::unpack_package(mapped->bytes(), dir, options);
  if (!r) {
    int rc = fail(file, r.error(), json);
    // A directory we may not overwrite is the caller's mistake, not the package's.
    return r.error().code == bem::codes::BEM_UNPACK_NOT_EMPTY ? kExitUsage : rc;
  }
  if (json) {
    Json j{{"uri", file},
           {"ok", true},
           {"folder", dir},
           {"payloads", r->payloads},
           {"payloadBytes", r->payload_bytes},
           {"manifestBytes", r->manifest_bytes},
           {"sounds", r->sounds}};
    print_json(std::move(j));
  } else {
    std::cout << printable(file) << ": unpacked into " << printable(dir) << ": manifest.json ("
              << r->manifest_bytes << " bytes), " << r->payloads << " payload files ("
              << r->payload_bytes << " bytes)"
              << (r->sounds ? ", " + std::to_string(r->sounds) + " driver sounds in sounds/" : "")
              << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_bem_convert_commands(CLI::App& bem, int& exit_code) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* convert = bem.add_subcommand(
      "convert",
      "Write a package in the binary (.bem) or ZIP container: identical payloads stored once, "
      "the lowest BEM version that expresses the content, invalid content refused");
  convert->add_option("in", args->in, "Package file (.bem, .zip) or package folder")
      ->required()
      ->type_name("IN");
  convert->add_option("out", args->out, "Output file")->required()->type_name("OUT");
  convert->add_option("--to", args->to, "Container to write (default: zip for *.zip, else bem)")
      ->check(CLI::IsMember({"bem", "zip"}))
      ->type_name("bem|zip");
  convert
      ->add_option("--level", args->level,
                   "Compression level: zstd 1..22 for binary, DEFLATE 1..9 for ZIP (values above "
                   "9 mean 9)")
      ->check(CLI::Range(1, 22))
      ->default_val(9)
      ->type_name("N");
  convert
      ->add_option("--threads", args->threads,
                   "Compression threads (0: one per CPU); the output does not depend on it")
      ->check(CLI::Range(0u, 256u))
      ->default_val(0)
      ->type_name("N");
  convert
      ->add_option("--minor", args->minor,
                   "Write BEM 1.M instead of the lowest version the content needs (never "
                   "lower); for ZIP this writes the format_version hint")
      ->check(CLI::Range(0, 5))
      ->type_name("M");
  convert->add_flag("--format-version", args->format_version,
                    "ZIP: write the \"format_version\" hint (the version written) into the "
                    "manifest; binary output always drops it");
  convert->add_flag("--stored", args->stored, "ZIP: store every entry uncompressed");
  convert->add_flag("--keep-unreferenced", args->keep_unreferenced,
                    "Keep payloads that nothing in the manifest references (default: dropped)");
  convert->add_flag("--skip-validation", args->skip_validation,
                    "Validate with the user's 'disable model validation' switch");
  convert->add_flag("--json", args->json, "Print the summary as JSON");
  convert->footer(
      "Exit status: 0 written, 1 invalid input package (the validator's errors are printed), "
      "2 usage or I/O error.");
  convert->callback([args, &exit_code] { exit_code = run_convert(*args); });

  auto file = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  CLI::App* unpack = bem.add_subcommand(
      "unpack",
      "Write a package as a folder: manifest.json exactly as stored and each payload decoded "
      "into payloads/0000.bin ...");
  unpack->add_option("file", *file, "Package file (.bem, .zip)")->required()->type_name("FILE");
  unpack->add_option("dir", *dir, "Output folder (created if missing)")
      ->required()
      ->type_name("DIR");
  unpack->add_flag("--force", *force,
                   "Write into a non-empty folder (its manifest.json and payload files are "
                   "replaced)");
  unpack->add_flag("--json", *json, "Print the summary as JSON");
  unpack->footer(
      "The folder can be read back by 'charkit bem convert DIR OUT'. Exit status: 0 unpacked, "
      "1 unreadable package, 2 usage or I/O error (including a non-empty folder without "
      "--force).");
  unpack->callback(
      [file, dir, force, json, &exit_code] { exit_code = run_unpack(*file, *dir, *force, *json); });
}

}  // namespace charkit::app
