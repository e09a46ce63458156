#include "charkit/core/result.h"

namespace charkit::core {

std::string Location::to_string() const {
  std::string s;
  if (!member.empty()) s += member;
  if (!pointer.empty()) {
    if (!s.empty()) s += ": ";
    s += pointer;
  }
  if (offset) {
    if (!s.empty()) s += ": ";
    s += "byte " + std::to_string(*offset);
  }
  return s;
}

std::string Error::to_string() const {
  std::string s = code + ": " + message;
  std::string where = location.to_string();
  if (!where.empty()) s += " (at " + where + ")";
  return s;
}

}  // namespace charkit::core
