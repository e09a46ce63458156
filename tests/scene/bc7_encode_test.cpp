// The BC7 encoder (scene/bc7_encode.h, scene/texture_encode.h): every
// block is read back with our BC7 decoder (itself tested against blocks
// built by hand in bc7_test.cpp). Flat colours must come back exactly; the
// painted and photographed textures of the test models (CesiumMan's JPEG,
// Godette's PNGs) must reach at least 40 dB PSNR on average.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "charkit/core/parallel.h"
#include "charkit/scene/detail/bc7.h"
#include "charkit/scene/texture_encode.h"
#include "tinygltf_include.h"

namespace charkit::scene {
namespace {

std::uint64_t decoded_error(const std::uint8_t* in, const std::uint8_t* block) {
  std::uint8_t out[64];
  decode_bc7_block(block, out);
  std::uint64_t err = 0;
  for (int i = 0; i < 64; ++i) {
    const int d = in[i] - out[i];
    err += static_cast<std::uint64_t>(d * d);
  }
  return err;
}

int block_mode(const std::uint8_t* block) {
  int mode = 0;
  while (mode < 8 && ((block[0] >> mode) & 1u) == 0) ++mode;
  return mode;
}

double psnr(std::uint64_t squared_error, std::size_t samples) {
  if (squared_error == 0) return 99.0;
  const double mse = static_cast<double>(squared_error) / static_cast<double>(samples);
  return 10.0 * std::log10(255.0 * 255.0 / mse);
}

TEST(Bc7Encode, FlatColoursAreExact) {
  std::mt19937 gen(7);
  for (int n = 0; n < 2000; ++n) {
    std::uint8_t rgba[4];
    for (auto& c : rgba) c = static_cast<std::uint8_t>(gen() & 0xFF);
    if (n < 256) rgba[0] = rgba[1] = rgba[2] = static_cast<std::uint8_t>(n);  // every grey
    if (n % 3 == 0) rgba[3] = 255;
    std::uint8_t in[64];
    for (int i = 0; i < 16; ++i) std::memcpy(in + 4 * i, rgba, 4);
    std::uint8_t block[16];
    EXPECT_EQ(encode_bc7_block(in, block), 0u)
        << int(rgba[0]) << "," << int(rgba[1]) << "," << int(rgba[2]) << "," << int(rgba[3]);
    ASSERT_EQ(decoded_error(in, block), 0u);
  }
}

// The error the encoder returns is the decoder's, for each mode on its own
// and all together, and more modes never do worse than one.
TEST(Bc7Encode, ReportedErrorIsTheDecodedErrorForEveryMode) {
  std::mt19937 gen(11);
  for (int n = 0; n < 300; ++n) {
    std::uint8_t in[64];
    // Smooth gradients with noise; a third with varying alpha.
    const int base[4] = {static_cast<int>(gen() % 200), static_cast<int>(gen() % 200),
                         static_cast<int>(gen() % 200), 200};
    for (int i = 0; i < 16; ++i)
      for (int c = 0; c < 4; ++c) {
        int v = base[c] + (i % 4) * static_cast<int>(gen() % 12) + (i / 4) * 3 +
                static_cast<int>(gen() % 5);
        if (c == 3 && n % 3 != 0) v = 255;
        in[4 * i + c] = static_cast<std::uint8_t>(std::min(v, 255));
      }
    std::uint64_t all_modes = 0;
    {
      std::uint8_t block[16];
      all_modes = encode_bc7_block(in, block);
      EXPECT_EQ(all_modes, decoded_error(in, block));
    }
    for (int mode : {1, 5, 6}) {
      Bc7EncodeOptions o;
      o.modes = 1u << mode;
      std::uint8_t block[16];
      const std::uint64_t err = encode_bc7_block(in, block, o);
      EXPECT_EQ(err, decoded_error(in, block)) << "mode " << mode;
      // Mode 1 is skipped for blocks with alpha (mode 6 is the fallback).
      EXPECT_EQ(block_mode(block), mode == 1 && n % 3 == 0 ? 6 : mode);
      EXPECT_LE(all_modes, err) << "mode " << mode;
    }
  }
}

// Two two-colour halves whose four colours lie on no common line, split as
// BC7 partition 0 (columns 2 and 3 are subset 1): mode 1 fits each half with
// its own endpoints and does better than any one-subset mode.
TEST(Bc7Encode, TwoSubsetBlockUsesModeOne) {
  const std::uint8_t colours[4][3] = {{20, 40, 220}, {60, 40, 180}, {200, 200, 30}, {240, 160, 30}};
  std::uint8_t in[64];
  for (int i = 0; i < 16; ++i) {
    const std::uint8_t* c = colours[i % 4];
    in[4 * i] = c[0];
    in[4 * i + 1] = c[1];
    in[4 * i + 2] = c[2];
    in[4 * i + 3] = 255;
  }
  std::uint8_t block[16];
  const std::uint64_t err = encode_bc7_block(in, block);
  EXPECT_EQ(block_mode(block), 1);
  Bc7EncodeOptions one_subset;
  one_subset.modes = (1u << 5) | (1u << 6);
  std::uint8_t other[16];
  EXPECT_LT(err, encode_bc7_block(in, other, one_subset));
  EXPECT_LE(err, 16u * 3u * 4u) << "within two levels per channel";
}

std::vector<RgbaImage> model_textures() {
  std::vector<RgbaImage> images;
  for (const char* name : {"CesiumMan.glb", "Godette_vrm_v4.vrm"}) {
    tinygltf::TinyGLTF loader;
    tinygltf::Model model;
    std::string err;
    std::string warn;
    const std::string path = std::string(CHARKIT_TEST_DATA) + "/models/" + name;
    EXPECT_TRUE(loader.LoadBinaryFromFile(&model, &err, &warn, path)) << path << ": " << err;
    for (const tinygltf::Image& im : model.images) {
      if (im.component != 4 || im.bits != 8 || im.width <= 0 || im.height <= 0) continue;
      RgbaImage img;
      img.width = static_cast<std::uint32_t>(im.width);
      img.height = static_cast<std::uint32_t>(im.height);
      img.pixels = im.image;
      images.push_back(std::move(img));
    }
  }
  return images;
}

TEST(Bc7Encode, TexturesOfTheTestModelsReachFortyDecibels) {
  const std::vector<RgbaImage> images = model_textures();
  ASSERT_GE(images.size(), 3u);
  double sum = 0;
  double worst = 99;
  for (const RgbaImage& img : images) {
    // A centre crop of at most 256×256 keeps the test quick under ASan.
    RgbaImage crop;
    crop.width = std::min<std::uint32_t>(img.width, 256);
    crop.height = std::min<std::uint32_t>(img.height, 256);
    crop.pixels.resize(std::size_t{crop.width} * crop.height * 4);
    const std::uint32_t x0 = (img.width - crop.width) / 2;
    const std::uint32_t y0 = (img.height - crop.height) / 2;
    for (std::uint32_t y = 0; y < crop.height; ++y)
      std::memcpy(crop.pixels.data() + crop.pixel_offset(0, y),
                  img.pixels.data() + img.pixel_offset(x0, y0 + y), std::size_t{crop.width} * 4);
    const std::vector<std::uint8_t> blocks = encode_bc7(crop);
    const std::uint32_t bw = (crop.width + 3) / 4;
    std::uint64_t err = 0;
    std::size_t samples = 0;
    for (std::uint32_t by = 0; by * 4 < crop.height; ++by)
      for (std::uint32_t bx = 0; bx < bw; ++bx) {
        std::uint8_t out[64];
        decode_bc7_block(blocks.data() + (std::size_t{by} * bw + bx) * 16, out);
        for (std::uint32_t y = 0; y < 4 && by * 4 + y < crop.height; ++y)
          for (std::uint32_t x = 0; x < 4 && bx * 4 + x < crop.width; ++x)
            for (int c = 0; c < 4; ++c) {
              const int d = crop.pixels[crop.pixel_offset(bx * 4 + x, by * 4 + y) + c] -
                            out[4 * (x + 4 * y) + c];
              err += static_cast<std::uint64_t>(d * d);
              ++samples;
            }
      }
    const double p = psnr(err, samples);
    std::printf("BC7 %ux%u crop of a %ux%u texture: %.2f dB\n", crop.width, crop.height, img.width,
                img.height, p);
    sum += p;
    worst = std::min(worst, p);
  }
  const double mean = sum / static_cast<double>(images.size());
  std::printf("BC7 mean PSNR over %zu textures: %.2f dB (worst %.2f dB)\n", images.size(), mean,
              worst);
  EXPECT_GE(mean, 40.0);
}

// Edge blocks repeat the last row and column; the bytes do not depend on
// the executor.
TEST(Bc7Encode, ImageEdgesAndExecutors) {
  RgbaImage img;
  img.width = 5;
  img.height = 3;
  img.pixels.resize(5 * 3 * 4);
  for (std::size_t i = 0; i < img.pixels.size(); ++i)
    img.pixels[i] = static_cast<std::uint8_t>((i * 37) % 251);
  const std::vector<std::uint8_t> pooled = encode_bc7(img);
  ASSERT_EQ(pooled.size(), 2u * 1u * 16u);
  const std::vector<std::uint8_t> serial = encode_bc7(img, {}, &core::serial_executor());
  EXPECT_EQ(pooled, serial);
  // The right block holds column 4 repeated: its decoded columns agree.
  std::uint8_t out[64];
  decode_bc7_block(pooled.data() + 16, out);
  for (int y = 0; y < 4; ++y)
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(out[4 * (0 + 4 * y) + c], out[4 * (3 + 4 * y) + c]);
    }
  EXPECT_TRUE(encode_bc7(RgbaImage{}).empty());
}

}  // namespace
}  // namespace charkit::scene
