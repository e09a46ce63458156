// Validate a BEM package and print its issues, one per line:
//   validate_bem FILE.bem|FILE.zip
// Exit status: 0 valid, 1 invalid, 2 usage or I/O error.
#include <charkit/bem/validate.h>
#include <charkit/core/mapped_file.h>
#include <charkit/core/report.h>
#include <charkit/version.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: validate_bem FILE\n";
    return 2;
  }
  auto file = charkit::core::MappedFile::open(argv[1]);
  if (!file) {
    std::cerr << argv[1] << ": error " << file.error().code << ": " << file.error().message << "\n";
    return 2;
  }
  charkit::bem::ValidateOptions options;
  options.input_hints = &*file;  // let the reader map payloads in bulk
  const charkit::bem::ValidationResult result =
      charkit::bem::validate_package(file->bytes(), options);
  // The CLI's convention: FILE: LOCATION: severity CODE: message.
  for (const charkit::core::Issue& issue : result.report.issues()) {
    std::cout << argv[1] << ": ";
    if (!issue.location.empty()) std::cout << issue.location.to_string() << ": ";
    std::cout << charkit::core::severity_name(issue.severity) << " " << issue.code << ": "
              << issue.message << "\n";
  }
  if (result.valid())
    std::cout << argv[1] << ": valid BEM 1." << result.summary.effective_minor;
  else
    std::cout << argv[1] << ": invalid";
  std::cout << " (charkit " << CHARKIT_VERSION_STRING << ")\n";
  return result.valid() ? 0 : 1;
}
