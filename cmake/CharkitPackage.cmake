# The installed package: charkitConfig.cmake (find_package with COMPONENTS),
# charkitConfigVersion.cmake and charkit.pc (pkg-config). Included by the
# top-level CMakeLists.txt after every module has called charkit_module().
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

get_property(CHARKIT_BUILT_COMPONENTS GLOBAL PROPERTY CHARKIT_BUILT_COMPONENTS)
configure_package_config_file(cmake/charkitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/charkitConfig.cmake
  INSTALL_DESTINATION ${CHARKIT_INSTALL_CMAKEDIR})
# 0.x: a minor release may break the API, so only the same MAJOR.MINOR is
# compatible; from 1.0 on, the same MAJOR.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_compat SameMinorVersion)
else()
  set(_compat SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/charkitConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_compat})
install(FILES ${PROJECT_BINARY_DIR}/cmake/charkitConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/charkitConfigVersion.cmake
        DESTINATION ${CHARKIT_INSTALL_CMAKEDIR})

# charkit.pc: every built module, most dependent first. With static
# libraries `pkg-config --static --libs charkit` adds what they link.
set(CHARKIT_PC_LIBS "")
foreach(c server store bem deformer motion render ops deform gpu scene core)
  if(c IN_LIST CHARKIT_BUILT_COMPONENTS)
    string(APPEND CHARKIT_PC_LIBS " -lcharkit_${c}")
  endif()
endforeach()
string(STRIP "${CHARKIT_PC_LIBS}" CHARKIT_PC_LIBS)
set(_req libcrypto zlib libzip)
set(_priv)
if("gpu" IN_LIST CHARKIT_BUILT_COMPONENTS AND CHARKIT_VULKAN_BACKEND)
  if(CMAKE_DL_LIBS)
    list(APPEND _priv -l${CMAKE_DL_LIBS})  # volk opens libvulkan.so.1 at run time
  endif()
endif()
if("bem" IN_LIST CHARKIT_BUILT_COMPONENTS)
  list(APPEND _req libzstd)
endif()
if("scene" IN_LIST CHARKIT_BUILT_COMPONENTS)
  list(APPEND _priv -lsquish -lastcenc)
  if(CHARKIT_WITH_ASSIMP)
    list(APPEND _req assimp)
  endif()
endif()
if("deformer" IN_LIST CHARKIT_BUILT_COMPONENTS AND CHARKIT_WITH_XSMM)
  list(APPEND _priv -lxsmm -lxsmmnoblas -lrt -ldl -lm)  # static archives, in this order
endif()
if("deformer" IN_LIST CHARKIT_BUILT_COMPONENTS AND CHARKIT_WITH_ONNX)
  list(APPEND _req protobuf)
  list(APPEND _priv -lonnx_proto)
endif()
if("store" IN_LIST CHARKIT_BUILT_COMPONENTS)
  list(APPEND _req sqlite3 libcurl)
  if(CHARKIT_WITH_POSTGRESQL)
    list(APPEND _req libpq)
  endif()
endif()
if("server" IN_LIST CHARKIT_BUILT_COMPONENTS)
  list(APPEND _req libssl)
  list(APPEND _priv -pthread)
endif()
list(REMOVE_DUPLICATES _req)
list(JOIN _req " " CHARKIT_PC_REQUIRES_PRIVATE)
list(JOIN _priv " " CHARKIT_PC_LIBS_PRIVATE)
# From <prefix>/<libdir>/pkgconfig back up to <prefix> ("../.." for lib).
file(RELATIVE_PATH CHARKIT_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" CHARKIT_PC_UP "${CHARKIT_PC_UP}")
configure_file(cmake/charkit.pc.in ${PROJECT_BINARY_DIR}/charkit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/charkit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
