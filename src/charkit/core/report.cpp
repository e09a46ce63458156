#include "charkit/core/report.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "charkit/core/diagnostic.h"
#include "charkit/core/json.h"
#include "charkit/core/utf8.h"

namespace charkit::core {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "error";
}

void Report::add(Issue issue) {
  counts_[static_cast<int>(issue.severity)]++;
  if (std::find(codes_seen_.begin(), codes_seen_.end(), issue.code) == codes_seen_.end())
    codes_seen_.push_back(issue.code);
  if (issues_.size() >= max_issues_) {
    truncated_ = true;
    return;
  }
  issues_.push_back(std::move(issue));
}

void Report::merge(const Report& other) {
  for (const auto& i : other.issues_) add(i);
  // Issues the other report counted but did not keep still count here.
  for (int s = 0; s < 3; ++s) {
    std::size_t kept = static_cast<std::size_t>(
        std::count_if(other.issues_.begin(), other.issues_.end(),
                      [s](const Issue& i) { return static_cast<int>(i.severity) == s; }));
    counts_[s] += other.counts_[s] - kept;
  }
  for (const auto& c : other.codes_seen_)
    if (std::find(codes_seen_.begin(), codes_seen_.end(), c) == codes_seen_.end())
      codes_seen_.push_back(c);
  if (other.truncated_) truncated_ = true;
}

bool Report::has_code(const std::string& code) const {
  return std::find(codes_seen_.begin(), codes_seen_.end(), code) != codes_seen_.end();
}

std::string format_message(Severity severity, std::string_view file, std::string_view location,
                           std::string_view code, std::string_view message) {
  std::string line;
  if (!file.empty()) line += printable(file) + ": ";
  if (!location.empty()) line += printable(location) + ": ";
  line += severity_name(severity);
  if (!code.empty()) line += " " + printable(code);
  line += ": " + printable(message);
  return line;
}

std::string Report::to_text(const std::string& subject) const {
  std::string out;
  for (const auto& i : issues_) {
    // The section, when there is one, goes with the code: "CODE [§2]".
    out += format_message(i.severity, subject, i.location.to_string(),
                          i.section.empty() ? i.code : i.code + " [" + i.section + "]", i.message);
    out += '\n';
  }
  if (truncated_) out += subject + ": (more issues not shown; raise --max-issues)\n";
  return out;
}

std::string Report::to_json_issues() const {
  nlohmann::ordered_json j;
  j["numErrors"] = counts_[0];
  j["numWarnings"] = counts_[1];
  j["numInfos"] = counts_[2];
  j["truncated"] = truncated_;
  auto msgs = nlohmann::ordered_json::array();
  for (const auto& i : issues_) {
    nlohmann::ordered_json m;
    m["code"] = i.code;
    m["severity"] = static_cast<int>(i.severity);
    m["severityName"] = severity_name(i.severity);
    m["section"] = i.section;
    if (!i.location.member.empty()) m["member"] = i.location.member;
    if (!i.location.pointer.empty()) m["pointer"] = i.location.pointer;
    if (i.location.offset) m["offset"] = *i.location.offset;
    m["message"] = i.message;
    msgs.push_back(std::move(m));
  }
  j["messages"] = std::move(msgs);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace charkit::core
