#include "charkit/store/detail/s3_xml.h"

#include <cstdint>

#include "charkit/store/error_codes.h"

namespace charkit::store::xml {
namespace {

using core::make_error;

core::Error xml_error(std::string what, std::size_t at) {
  return core::error_at_offset(codes::STORE_S3_XML, "malformed XML answer: " + std::move(what), at);
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
bool is_name_char(char c) {
  return !is_space(c) && c != '/' && c != '>' && c != '<' && c != '=' && c != '"' && c != '\'' &&
         c != '&' && c != '?' && c != '!';
}

std::string_view local_name(std::string_view qname) {
  const auto colon = qname.rfind(':');
  return colon == std::string_view::npos ? qname : qname.substr(colon + 1);
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Appends character data [begin, end) of `doc` to `out`, decoding references.
core::Status decode_text(std::string_view doc, std::size_t begin, std::size_t end,
                         std::string& out) {
  std::size_t i = begin;
  while (i < end) {
    const char c = doc[i];
    if (c != '&') {
      out.push_back(c);
      ++i;
      continue;
    }
    const auto semi = doc.find(';', i);
    if (semi == std::string_view::npos || semi >= end || semi - i > 12)
      return xml_error("unterminated character reference", i);
    const std::string_view ref = doc.substr(i + 1, semi - i - 1);
    if (ref == "amp") {
      out.push_back('&');
    } else if (ref == "lt") {
      out.push_back('<');
    } else if (ref == "gt") {
      out.push_back('>');
    } else if (ref == "quot") {
      out.push_back('"');
    } else if (ref == "apos") {
      out.push_back('\'');
    } else if (ref.size() >= 2 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      if (digits.empty() || digits.size() > 8) return xml_error("bad character reference", i);
      std::uint32_t cp = 0;
      for (char d : digits) {
        std::uint32_t v = 0;
        if (d >= '0' && d <= '9')
          v = static_cast<std::uint32_t>(d - '0');
        else if (hex && d >= 'a' && d <= 'f')
          v = static_cast<std::uint32_t>(d - 'a' + 10);
        else if (hex && d >= 'A' && d <= 'F')
          v = static_cast<std::uint32_t>(d - 'A' + 10);
        else
          return xml_error("bad character reference", i);
        cp = cp * (hex ? 16u : 10u) + v;
        if (cp > 0x10FFFF) return xml_error("character reference out of range", i);
      }
      if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
        return xml_error("character reference out of range", i);
      append_utf8(out, cp);
    } else {
      return xml_error("unknown entity '&" + std::string(ref) + ";'", i);
    }
    i = semi + 1;
  }
  return core::Ok{};
}

}  // namespace

const Node* Node::child(std::string_view n) const {
  for (const Node& c : children)
    if (c.name == n) return &c;
  return nullptr;
}

std::string Node::child_text(std::string_view n) const {
  const Node* c = child(n);
  return c ? c->text : std::string();
}

std::vector<const Node*> Node::all(std::string_view n) const {
  std::vector<const Node*> out;
  for (const Node& c : children)
    if (c.name == n) out.push_back(&c);
  return out;
}

core::Result<Node> parse(std::string_view doc, const Limits& limits) {
  if (doc.size() > limits.max_bytes)
    return xml_error("larger than " + std::to_string(limits.max_bytes) + " bytes", 0);
  Node root;
  bool have_root = false;
  std::vector<Node*> stack;  // the open elements; only the innermost gets children
  std::size_t nodes = 0;
  std::size_t i = 0;
  if (doc.substr(0, 3) == "\xEF\xBB\xBF") i = 3;

  while (i < doc.size()) {
    if (doc[i] != '<') {
      const auto lt = doc.find('<', i);
      const std::size_t end = lt == std::string_view::npos ? doc.size() : lt;
      if (stack.empty()) {
        for (std::size_t k = i; k < end; ++k)
          if (!is_space(doc[k])) return xml_error("text outside the root element", k);
      } else if (auto s = decode_text(doc, i, end, stack.back()->text); !s) {
        return std::move(s).error();
      }
      i = end;
      continue;
    }
    // Markup.
    if (doc.compare(i, 4, "<!--") == 0) {
      const auto close = doc.find("-->", i + 4);
      if (close == std::string_view::npos) return xml_error("unterminated comment", i);
      i = close + 3;
      continue;
    }
    if (doc.compare(i, 9, "<![CDATA[") == 0) {
      if (stack.empty()) return xml_error("CDATA outside the root element", i);
      const auto close = doc.find("]]>", i + 9);
      if (close == std::string_view::npos) return xml_error("unterminated CDATA section", i);
      stack.back()->text.append(doc.substr(i + 9, close - i - 9));
      i = close + 3;
      continue;
    }
    if (doc.compare(i, 2, "<?") == 0) {
      const auto close = doc.find("?>", i + 2);
      if (close == std::string_view::npos) return xml_error("unterminated declaration", i);
      i = close + 2;
      continue;
    }
    if (doc.compare(i, 2, "<!") == 0) return xml_error("DOCTYPE and declarations are refused", i);
    if (doc.compare(i, 2, "</") == 0) {
      std::size_t j = i + 2;
      while (j < doc.size() && is_name_char(doc[j])) ++j;
      const std::string_view name = local_name(doc.substr(i + 2, j - i - 2));
      while (j < doc.size() && is_space(doc[j])) ++j;
      if (j >= doc.size() || doc[j] != '>') return xml_error("bad end tag", i);
      if (stack.empty() || stack.back()->name != name)
        return xml_error("end tag </" + std::string(name) + "> does not match", i);
      stack.pop_back();
      i = j + 1;
      continue;
    }
    // Start tag.
    std::size_t j = i + 1;
    while (j < doc.size() && is_name_char(doc[j])) ++j;
    if (j == i + 1) return xml_error("bad tag", i);
    const std::string_view name = local_name(doc.substr(i + 1, j - i - 1));
    if (name.empty()) return xml_error("empty element name", i);
    // Attributes: name="value" or name='value', skipped.
    bool self_closing = false;
    while (true) {
      while (j < doc.size() && is_space(doc[j])) ++j;
      if (j >= doc.size()) return xml_error("unterminated start tag", i);
      if (doc[j] == '>') {
        ++j;
        break;
      }
      if (doc[j] == '/') {
        if (j + 1 >= doc.size() || doc[j + 1] != '>') return xml_error("bad start tag", i);
        self_closing = true;
        j += 2;
        break;
      }
      const std::size_t a = j;
      while (j < doc.size() && is_name_char(doc[j])) ++j;
      if (j == a) return xml_error("bad attribute", j);
      while (j < doc.size() && is_space(doc[j])) ++j;
      if (j >= doc.size() || doc[j] != '=') return xml_error("attribute without value", j);
      ++j;
      while (j < doc.size() && is_space(doc[j])) ++j;
      if (j >= doc.size() || (doc[j] != '"' && doc[j] != '\''))
        return xml_error("unquoted attribute value", j);
      const auto close = doc.find(doc[j], j + 1);
      if (close == std::string_view::npos) return xml_error("unterminated attribute value", j);
      j = close + 1;
    }
    if (++nodes > limits.max_nodes) return xml_error("too many elements", i);
    Node* node = nullptr;
    if (stack.empty()) {
      if (have_root) return xml_error("a second root element", i);
      have_root = true;
      root.name = std::string(name);
      node = &root;
    } else {
      if (stack.size() >= limits.max_depth) return xml_error("nested too deep", i);
      stack.back()->children.push_back(Node{std::string(name), {}, {}});
      node = &stack.back()->children.back();
    }
    if (!self_closing) stack.push_back(node);
    i = j;
  }
  if (!have_root) return xml_error("no root element", doc.size());
  if (!stack.empty()) return xml_error("unclosed element <" + stack.back()->name + ">", doc.size());
  return root;
}

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace charkit::store::xml
