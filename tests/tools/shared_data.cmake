# The shared datasets for the command tests: ${data} is $GPUFORECAST_DATA, else DEFAULT_DATA (the
# folder CMake was configured with). A test that cannot find them fails, it never skips.
if(DEFINED ENV{GPUFORECAST_DATA} AND NOT "$ENV{GPUFORECAST_DATA}" STREQUAL "")
  set(data "$ENV{GPUFORECAST_DATA}")
else()
  set(data "${DEFAULT_DATA}")
endif()

# shared_data_file(<var> <path inside the datasets folder>): the file's full path, or a failure
# that says where the datasets were looked for.
function(shared_data_file var relative)
  set(path "${data}/${relative}")
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "shared datasets expected at ${data} (set GPUFORECAST_DATA): ${path} is missing")
  endif()
  set(${var} "${path}" PARENT_SCOPE)
endfunction()
