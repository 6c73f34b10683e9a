# Every numeric command-line option refuses negative, NaN, infinite, malformed and out-of-range
# values with a message that names the option, and exits 2 (a usage error), never
# "unexpected error" and never by running with a wrapped-around value.

# bad(<option> <value> <regex> subcommand args...): the run must fail with exit status 2.
function(bad option value pattern)
  execute_process(COMMAND "${CLI}" ${ARGN} ${option} ${value} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 60)
  string(REPLACE ";" " " line "gpuforecast ${ARGN} ${option} ${value}")
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "${line}\nexited ${rc}, expected 2 (usage error):\n${out}${err}")
  endif()
  if(NOT "${err}" MATCHES "${option}: ${pattern}")
    message(FATAL_ERROR "${line}\nmessage does not name ${option} and match \"${pattern}\":\n${out}${err}")
  endif()
  if("${out}${err}" MATCHES "unexpected error")
    message(FATAL_ERROR "${line}\nended in an unexpected error:\n${out}${err}")
  endif()
endfunction()

set(search search --replay missing.json)
bad(--budget -5 "must not be negative" ${search})
bad(--budget abc "expected a whole number" ${search})
bad(--budget 1e3 "expected a whole number" ${search})
bad(--budget 99999999999999999999999 "out of range" ${search})
bad(--seeds nan "expected a whole number" ${search})
bad(--first-seed -1 "must not be negative" ${search})
bad(--threads -2 "must not be negative" ${search})
bad(--budget-seconds nan "must be a finite number" ${search})
bad(--budget-seconds inf "must be a finite number" ${search})
bad(--budget-seconds -1 "must not be negative" ${search})

set(calibrate calibrate --model m.gfm --data d.json --out o.gfm)
bad(--alpha nan "must be a finite number" ${calibrate})
bad(--alpha 1.5 "must be within \\[0, 1\\]" ${calibrate})
bad(--delta -0.1 "must be within \\[0, 1\\]" ${calibrate})
bad(--tolerance -1 "must not be negative" ${calibrate})
bad(--seed -3 "must not be negative" ${calibrate})

set(eval eval --protocol interpolate)
bad(--train-fraction 2 "must be within \\[0, 1\\]" ${eval})
bad(--seeds -1 "must not be negative" ${eval})

bad(--top -1 "must not be negative" predict --model ${CLI} --data ${CLI})  # any existing files: the value is refused first
bad(--seed x "expected a whole number" train --data ${CLI} --out o.gfm)
