// tinygltf's implementation, compiled once for every test program that reads
// our glTF output back with it (charkit_test_tinygltf; the header is
// tinygltf_include.h). stb_image's implementation comes from charkit_scene.
#define CHARKIT_TINYGLTF_IMPLEMENTATION
#include "tinygltf_include.h"
