// tinygltf (libtinygltf-dev, header-only use) for tests that read our glTF
// output back; a test program that includes this links
// charkit_test_tinygltf, whose one source (tinygltf.cpp) defines
// CHARKIT_TINYGLTF_IMPLEMENTATION before including it (the Debian shared
// libtinygltf is not linked). stb_image's implementation comes from
// charkit_scene (scene/image.cpp).
#pragma once

#ifdef CHARKIT_TINYGLTF_IMPLEMENTATION
#define TINYGLTF_IMPLEMENTATION
#endif
#define TINYGLTF_NO_STB_IMAGE_WRITE
#define TINYGLTF_NO_INCLUDE_STB_IMAGE
#define TINYGLTF_NO_EXTERNAL_IMAGE
#include <stb/stb_image.h>
#include <tiny_gltf.h>
