// gpu::Scratch (context.h): per-run resources, on both backends.
#include <algorithm>
#include <cstring>

#include "charkit/gpu/context.h"

namespace charkit::gpu {

Scratch::~Scratch() {
  for (BufferId b : buffers_) context_.free_buffer(b);
  for (ImageId i : images_) context_.free_image(i);
}

core::Result<BufferId> Scratch::buffer(const void* data, std::size_t bytes, std::size_t size) {
  auto b = context_.create_buffer(std::max<std::size_t>(size, 4));
  if (!b) return std::move(b).error();
  buffers_.push_back(*b);
  std::span<std::uint8_t> m = context_.map(*b);
  std::fill(m.begin(), m.end(), std::uint8_t{0});
  if (bytes > 0) std::memcpy(m.data(), data, std::min(bytes, m.size()));
  return *b;
}

core::Result<ImageId> Scratch::image(std::uint32_t width, std::uint32_t height,
                                     ImageFormat format) {
  auto i = context_.create_image(width, height, format);
  if (!i) return std::move(i).error();
  images_.push_back(*i);
  return *i;
}

}  // namespace charkit::gpu
