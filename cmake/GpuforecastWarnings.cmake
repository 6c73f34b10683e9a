# Warnings for our own targets only (never leaked to consumers through the package).
add_library(gpuforecast_warnings INTERFACE)
target_compile_options(gpuforecast_warnings INTERFACE
  $<BUILD_INTERFACE:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>
  $<BUILD_INTERFACE:$<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>>)
if(GPUFORECAST_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
