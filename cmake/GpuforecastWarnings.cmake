# Warnings for our own targets only (never leaked to consumers through the package).
add_library(gpuforecast_warnings INTERFACE)
target_compile_options(gpuforecast_warnings INTERFACE
  $<BUILD_INTERFACE:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>
  $<BUILD_INTERFACE:$<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>>
  # GCC 12 at -O2/-O3 reports impossible memcpy overlaps inside std::string concatenation
  # (GCC bug 105329, fixed in 13): a false positive in libstdc++'s own code, not ours.
  $<BUILD_INTERFACE:$<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>>)
if(GPUFORECAST_SANITIZE)
  # -g1 (line tables) after the build type's -g: the sanitizers' reports need file and line only,
  # and full debug information made CI's sanitizer build and its hundred links minutes slower.
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g1)
  add_link_options(-fsanitize=address,undefined)
endif()
