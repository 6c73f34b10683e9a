# run(<name> <expect: ok|fail> <regex the output must match> args...): runs
# "${CLI}" ${run_prefix} args... and fails the test, naming the command line, when it exits
# otherwise than expected or its output (stdout and stderr) does not match. Leaves stdout in
# ${name}_out and stderr in ${name}_err. run_prefix, set by the including script when it wants
# one, holds the arguments every one of its runs starts with; run_program_name, the name the
# command line is shown with (gpuforecast unless the script runs another program, a benchmark).
function(run name expect pattern)
  set(args ${run_prefix} ${ARGN})
  execute_process(COMMAND "${CLI}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT DEFINED run_program_name)
    set(run_program_name gpuforecast)
  endif()
  string(REPLACE ";" " " line "${run_program_name} ${args}")
  if(expect STREQUAL "ok" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${line}\nexited ${rc}, expected success:\n${out}${err}")
  elseif(expect STREQUAL "fail" AND rc EQUAL 0)
    message(FATAL_ERROR "${line}\nsucceeded, expected an error:\n${out}")
  endif()
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "${line}\noutput does not match \"${pattern}\":\n${out}${err}")
  endif()
  set(${name}_out "${out}" PARENT_SCOPE)
  set(${name}_err "${err}" PARENT_SCOPE)
endfunction()
