// A minimal, bounded XML reader for the small answers of S3 (ListObjectsV2,
// InitiateMultipartUpload, ListMultipartUploads, CompleteMultipartUpload,
// Error). Elements, attributes (skipped), text, the five predefined entities,
// numeric character references, CDATA, comments, processing instructions and
// a DOCTYPE-free prolog. Anything else (a DOCTYPE, unbalanced tags, text
// outside the root, too deep, too many nodes, too large) is an error, never a
// crash. Namespace prefixes are dropped ("s3:Key" is "Key").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::store::xml {

struct Limits {
  std::size_t max_bytes = 4u << 20;  ///< the whole document
  std::size_t max_depth = 16;
  std::size_t max_nodes = 100'000;
};

struct Node {
  std::string name;  ///< local name
  std::string text;  ///< character data directly inside (entities decoded)
  std::vector<Node> children;

  /// First child with this name; nullptr when there is none.
  const Node* child(std::string_view n) const;
  /// Text of the first child with this name ("" when absent).
  std::string child_text(std::string_view n) const;
  /// Every child with this name.
  std::vector<const Node*> all(std::string_view n) const;
};

/// Parses a document; error code STORE_S3_XML (location: byte offset).
core::Result<Node> parse(std::string_view document, const Limits& limits = {});

/// Escapes & < > " ' for element text.
std::string escape(std::string_view text);

}  // namespace charkit::store::xml
