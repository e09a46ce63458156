// volk (Debian libvulkan-volk-dev ships it as source): the Vulkan loader's
// entry points, loaded at run time, so charkit starts on machines without
// libvulkan.so.1 and reports GPU_UNAVAILABLE there.
#define VOLK_IMPLEMENTATION
#include <volk.h>
