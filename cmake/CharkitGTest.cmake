# charkit_gtest_suites(TARGET [TEST_PREFIX prefix] [TEST_FILTER filter]
#                      [PROPERTIES name value ...])
#
# Registers a GoogleTest program with ctest as one test per test suite (every
# TEST of a fixture, every instance of a TEST_P), not one per TEST as
# gtest_discover_tests does. Each ctest test starts the program once with
# --gtest_filter listing exactly that suite's tests. Why: a sanitizer build
# spends about 0.25 s starting a test program (ASan registers every global,
# maps its shadow memory, LeakSanitizer scans the heap at exit), which for
# ~1,900 one-test processes was more than half of the tests phase of
# scripts/test (docs/building.md). The tests run as they do when the program
# is started by hand: in one process, in their declared order.
#
# As with gtest_discover_tests, the list is read after each build (a
# POST_BUILD step runs `TARGET --gtest_list_tests`), so a new TEST needs no
# reconfigure. TEST_FILTER (a --gtest_filter pattern) picks the tests; ctest
# names are TEST_PREFIX followed by the suite name. PROPERTIES are set on
# every suite's test (set_tests_properties' name/value pairs; values may
# hold ';').
#
# A suite's test fails when any of its tests fails; its output (printed by
# ctest --output-on-failure) names the failing test. Skipped tests are
# counted and listed with their reasons by scripts/test from ctest's log
# (scripts/gtest_skips), since a suite can mix skipped and run tests.
set(_charkit_gtest_list_script ${CMAKE_CURRENT_LIST_DIR}/CharkitGTestList.cmake)

function(charkit_gtest_suites target)
  cmake_parse_arguments(G "" "TEST_PREFIX;TEST_FILTER" "PROPERTIES" ${ARGN})
  if(G_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "charkit_gtest_suites: unknown arguments ${G_UNPARSED_ARGUMENTS}")
  endif()
  # One list file per registration (a program may be registered several
  # times with different filters).
  get_property(_n TARGET ${target} PROPERTY CHARKIT_GTEST_REGISTRATIONS)
  if(NOT _n)
    set(_n 0)
  endif()
  math(EXPR _next "${_n} + 1")
  set_property(TARGET ${target} PROPERTY CHARKIT_GTEST_REGISTRATIONS ${_next})
  set(_base "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_${_n}")

  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND}
            "-DTEST_EXECUTABLE=$<TARGET_FILE:${target}>"
            "-DTEST_FILTER=${G_TEST_FILTER}"
            "-DLIST_FILE=${_base}_list.cmake"
            -P ${_charkit_gtest_list_script}
    BYPRODUCTS ${_base}_list.cmake
    VERBATIM)

  # The file ctest includes: the suites read after the build, each one test.
  set(_props "")
  if(G_PROPERTIES)
    list(LENGTH G_PROPERTIES _len)
    math(EXPR _odd "${_len} % 2")
    if(_odd)
      message(FATAL_ERROR "charkit_gtest_suites(${target}): PROPERTIES takes name/value pairs")
    endif()
    math(EXPR _last "${_len} - 1")
    foreach(_i RANGE 0 ${_last} 2)
      math(EXPR _j "${_i} + 1")
      list(GET G_PROPERTIES ${_i} _name)
      list(GET G_PROPERTIES ${_j} _value)
      string(APPEND _props "    set_tests_properties(\"\${_name}\" PROPERTIES ${_name} [==[${_value}]==])\n")
    endforeach()
  endif()
  file(GENERATE OUTPUT "${_base}_tests.cmake" CONTENT
"if(EXISTS [==[${_base}_list.cmake]==])
  include([==[${_base}_list.cmake]==])
  set(_prefix [==[${G_TEST_PREFIX}]==])
  set(_index 0)
  foreach(_suite IN LISTS charkit_gtest_suites)
    set(_name \"\${_prefix}\${_suite}\")
    add_test(\"\${_name}\" [==[$<TARGET_FILE:${target}>]==] \"--gtest_filter=\${charkit_gtest_filter_\${_index}}\")
    math(EXPR _index \"\${_index} + 1\")
    set_tests_properties(\"\${_name}\" PROPERTIES WORKING_DIRECTORY [==[${CMAKE_CURRENT_BINARY_DIR}]==])
${_props}  endforeach()
else()
  add_test([==[${target}_NOT_BUILT]==] [==[${target}_NOT_BUILT]==])
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${_base}_tests.cmake")
endfunction()
