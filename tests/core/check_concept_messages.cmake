# Compiles concept_checks_fail.cpp, which must fail, and checks that the compiler output names
# each missing requirement in the words of core/concepts.hpp.
# Run as: cmake -DCXX=... -DINCLUDE_DIR=... -DSOURCE=... -P check_concept_messages.cmake
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -I${INCLUDE_DIR} ${SOURCE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but its types do not model the concepts")
endif()
set(expected
  "Surrogate: the type needs a member update"
  "PersistentSurrogate: the type needs a member fit"
  "PersistentSurrogate: the type needs a const member kind"
  "PersistentSurrogate: the type needs a const member save"
  "PersistentSurrogate: the type needs a static member load"
  "SelectivePredictor: decide.* must return std::vector<Decision>"
  "Benchmarker: the type needs a member measure")
foreach(e IN LISTS expected)
  if(NOT "${out}${err}" MATCHES "${e}")
    message(FATAL_ERROR "the compiler output lacks \"${e}\":\n${out}${err}")
  endif()
endforeach()
# The return-type message must not repeat a missing member's message.
if("${out}${err}" MATCHES "Benchmarker: measure")
  message(FATAL_ERROR "a missing measure() also reported its return type:\n${err}")
endif()
message(STATUS "each unmet requirement is named")
