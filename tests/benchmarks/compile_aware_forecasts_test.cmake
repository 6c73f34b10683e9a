# benchmarks/compile_aware_forecasts --candidates on two small kernels: every candidate is scored
# on the same splits as the default with features, and the choice leaving one kernel out follows
# its rule: a candidate identical to the default ties and is not preferred, one of a single tree
# per member loses top-1% recall and is never chosen; a bad candidate is refused before any work.
include(${CMAKE_CURRENT_LIST_DIR}/../tools/shared_data.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/../tools/run_command.cmake)
set(run_program_name compile_aware_forecasts)
shared_data_file(space benchmark_hub/cachefiles/convolution/RTX_3090.json.gz)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

set(args --data "${data}" --kernels convolution,convolution_milo --seeds 2
         --fractions 0.02 --no-unseen-kernel --candidates "compact(rounds=1),compact" --json "${WORK}/out.json")
run(choice ok "chosen leaving one kernel out" ${args})

# The same model under another name: the same numbers on the same splits.
set(number "[+-]?[0-9]+ +[+-][0-9.]+ +[+-][0-9.]+")
if(NOT choice_out MATCHES "\ndefault \\(--with-features\\) +(${number})\n")
  message(FATAL_ERROR "no row for the default with features in:\n${choice_out}")
endif()
set(with_features_row "${CMAKE_MATCH_1}")
if(NOT choice_out MATCHES "\ncompact +(${number})\n")
  message(FATAL_ERROR "no row for the candidate compact in:\n${choice_out}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL with_features_row)
  message(FATAL_ERROR "compact scored ${CMAKE_MATCH_1}, the default with features ${with_features_row}:\n${choice_out}")
endif()
if(NOT choice_out MATCHES "\ncompact\\(rounds=1\\) +[1-9]")
  message(FATAL_ERROR "one tree per member lost no top-1% recall:\n${choice_out}")
endif()

# Each kernel left out chooses the default: the tie keeps it, the single tree loses on the other kernel.
file(READ "${WORK}/out.json" json)
string(JSON n LENGTH "${json}" interpolation candidates left_out)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "${n} kernels left out, expected 2:\n${json}")
endif()
foreach(i 0 1)
  string(JSON kernel GET "${json}" interpolation candidates left_out ${i} kernel)
  string(JSON chosen GET "${json}" interpolation candidates left_out ${i} chosen)
  if(NOT chosen STREQUAL "default (--with-features)")
    message(FATAL_ERROR "with ${kernel} left out, ${chosen} was chosen, expected the default:\n${choice_out}")
  endif()
endforeach()

run(bad fail "compact has no option \"bogus\"" --data "${data}" --candidates "compact(bogus=1)")
